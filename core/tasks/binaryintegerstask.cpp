// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/binaryintegerstask.h"

#include <torch/torch.h>

namespace d2dpo {

BinaryIntegersTask::BinaryIntegersTask(int64_t length) : m_length(length) {}

torch::Tensor BinaryIntegersTask::encode(const torch::Tensor& values) const
{
    const auto positions = torch::arange(m_length, values.options());
    return positions.unsqueeze(0).lt(values.unsqueeze(1)).to(torch::kLong);
}

torch::Tensor BinaryIntegersTask::sampleData(int64_t count, torch::Generator& generator, torch::Device device) const
{
    const auto values = torch::randint(0, m_length + 1, {count}, generator, torch::dtype(torch::kLong).device(device));
    return encode(values);
}

torch::Tensor BinaryIntegersTask::decode(const torch::Tensor& sequences) const
{
    const auto ones = sequences.eq(1).sum(1);
    const auto valid = sequences.eq(encode(ones)).all(1);
    return torch::where(valid, ones, torch::full_like(ones, -1));
}

torch::Tensor BinaryIntegersTask::ruleRank(const torch::Tensor& sequences) const
{
    const auto value = decode(sequences);
    const auto valid = value.ge(0);
    // valid odd -> 2, valid even -> 1, invalid -> 0
    return valid.to(torch::kLong) + (valid & value.remainder(2).eq(1)).to(torch::kLong);
}

std::pair<torch::Tensor, torch::Tensor> BinaryIntegersTask::rulePairs(int64_t count, torch::Generator& generator,
                                                                      torch::Device device) const
{
    const auto options = torch::dtype(torch::kLong).device(device);
    const int64_t oddValues = (m_length + 1) / 2; // 1, 3, ..., <= N
    const int64_t evenValues = m_length / 2 + 1;  // 0, 2, ..., <= N
    const auto odd = torch::randint(0, oddValues, {count}, generator, options) * 2 + 1;
    const auto even = torch::randint(0, evenValues, {count}, generator, options) * 2;
    return {encode(odd), encode(even)};
}

} // namespace d2dpo
