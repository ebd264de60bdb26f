// SPDX-License-Identifier: GPL-3.0-or-later
// How a network read from published weights takes its tensors (esmdenoiser.h, ditdenoiser.h):
// every weight slot the architecture declares finds the file's tensor of that name and shape, F16
// and BF16 become float32 master weights, the tensors the network does not compute with but the
// file carries (passengers: rotary buffers, a contact head) are kept aside to be written back as
// read, and anything else is refused, as are non-finite weights. One rule for every architecture.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <torch/ordered_dict.h>
#include <torch/types.h>

#include "base/result.h"

namespace d2dpo {

struct PublishedSlots {
    /// Every weight in the order the file's state dict lists it, with its shape.
    std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
    std::function<bool(const std::string& name)> isPassenger;
    /// A tensor the file may carry that the network reads elsewhere (a tied decoder): dropped.
    std::function<bool(const std::string& name)> isDropped;
    std::string prefix; ///< before every key; named in the error when the keys carry another
};

struct PublishedTensors {
    torch::OrderedDict<std::string, torch::Tensor> parameters; ///< requires grad, in `shapes` order
    torch::OrderedDict<std::string, torch::Tensor> passengers;
};

Result<PublishedTensors> takePublishedTensors(const PublishedSlots& slots,
                                              std::vector<std::pair<std::string, torch::Tensor>> tensors);

} // namespace d2dpo
