// SPDX-License-Identifier: GPL-3.0-or-later
// What every network read from published weights shares (esmdenoiser.h, ditdenoiser.h): its
// parameters in named slots under the file's own keys, the passengers the file carried, the task's
// tokens framed and mapped by its vocabulary, and the moves, copies and slot swaps that keep the
// architecture's views of its tensors bound (bind()). An architecture adds its arithmetic.
#pragma once

#include <memory>
#include <string>

#include "base/modelvocabulary.h"
#include "model/slotteddenoiser.h"
#include "model/vocabularyframe.h"

namespace d2dpo {

class PublishedDenoiser : public SlottedDenoiser {
public:
    std::vector<torch::Tensor> parameters() const override { return m_parameters.values(); }
    torch::OrderedDict<std::string, torch::Tensor> named_parameters() const override { return m_parameters; }
    torch::OrderedDict<std::string, torch::Tensor> named_buffers() const override { return m_passengers; }
    void train(bool on) override { m_training = on; }
    void to(torch::Device device) override;
    void to(torch::ScalarType dtype) override;
    std::shared_ptr<DenoiserModel> deepCopy() const override;
    torch::Tensor parameterSlot(const std::string& name) const override { return m_parameters[name]; }
    void setParameterSlot(const std::string& name, const torch::Tensor& value) override;

    /// Before every key: "" or the wrapper's ("net." for DPLM, "backbone." for MDLM's release).
    const std::string& prefix() const { return m_prefix; }

protected:
    PublishedDenoiser(const ModelVocabulary& vocabulary, int64_t length, std::string prefix);
    /// A network of the same architecture and task with no tensors yet (deepCopy fills them).
    virtual std::shared_ptr<PublishedDenoiser> emptyCopy() const = 0;
    /// Points the architecture's views at the tensors of m_parameters (after loading, moving,
    /// copying or a slot swap).
    virtual void bind() = 0;
    /// The file's tensor `name` under the prefix.
    const torch::Tensor& at(const std::string& name) const { return m_parameters[m_prefix + name]; }

    ModelVocabulary m_vocabulary;
    VocabularyFrame m_frame;
    std::string m_prefix;
    bool m_training = true;
    torch::OrderedDict<std::string, torch::Tensor> m_parameters;
    torch::OrderedDict<std::string, torch::Tensor> m_passengers;
};

} // namespace d2dpo
