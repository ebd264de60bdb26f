// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/task.h"

#include "tasks/binaryintegerstask.h"

#include <torch/torch.h>

namespace d2dpo {

std::string Task::format(const std::vector<int64_t>& sequence) const
{
    std::string text;
    text.reserve(sequence.size());
    for (int64_t token : sequence)
        text += token == maskToken() ? '_' : (token < 10 ? char('0' + token) : '?');
    return text;
}

Result<std::unique_ptr<Task>> makeTask(const TaskConfig& config)
{
    if (Status s = validate(config); !s)
        return makeError(s.error());
    return std::unique_ptr<Task>(std::make_unique<BinaryIntegersTask>(config.length));
}

Result<std::vector<int64_t>> Task::parse(const std::string& text) const
{
    std::vector<int64_t> tokens;
    tokens.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const int64_t token = text[i] - '0';
        if (text[i] < '0' || text[i] > '9' || token >= vocabSize()) {
            std::string message = "'";
            message += text[i];
            message += "' at position " + std::to_string(i + 1) + " of \"" + text.substr(0, 80) +
                       "\" is not a symbol of the " + name() + " task";
            return makeError(message);
        }
        tokens.push_back(token);
    }
    return tokens;
}

std::vector<std::string> formatRows(const Task& task, const torch::Tensor& sequences)
{
    const torch::Tensor rows = sequences.to(torch::kCPU, torch::kLong).contiguous();
    const int64_t count = rows.size(0);
    const int64_t length = rows.size(1);
    const int64_t* data = rows.data_ptr<int64_t>();
    std::vector<std::string> texts;
    texts.reserve(size_t(count));
    for (int64_t i = 0; i < count; ++i)
        texts.push_back(task.format(std::vector<int64_t>(data + i * length, data + (i + 1) * length)));
    return texts;
}

} // namespace d2dpo
