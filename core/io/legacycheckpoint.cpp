// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/legacycheckpoint.h"

#include <torch/serialize/input-archive.h>
#include <torch/torch.h>

#include "base/failurereport.h"
#include "model/archivegate.h"

namespace d2dpo {

Result<CheckpointPayload> readLegacyCheckpoint(std::string_view payload)
{
    if (Status s = checkArchiveBeforeLoading(payload, ArchiveCode::None); !s)
        return makeError(s.error() + " (a format-1 checkpoint, written before 2026-11-28, is read only as d2dpo "
                                     "wrote it: modules and tensors, no code)");
    CheckpointPayload out;
    try {
        torch::serialize::InputArchive archive;
        archive.load_from(payload.data(), payload.size(), torch::Device(torch::kCPU));
        c10::IValue info;
        if (!archive.try_read("info", info) || !info.isString())
            return makeError("its description (info) is missing");
        out.infoJson = info.toStringRef();
        torch::Tensor code;
        if (archive.try_read("torchscript", code)) {
            code = code.contiguous();
            if (code.scalar_type() != torch::kUInt8 || code.dim() != 1)
                return makeError("its TorchScript module is not stored as bytes");
            out.torchscript.assign(reinterpret_cast<const char*>(code.data_ptr<uint8_t>()), size_t(code.numel()));
        }
        // A model brought in carries its weights in its archive; checkpoints written before
        // 2026-11-27 also have them apart, and those are the ones read then.
        torch::serialize::InputArchive weights;
        if (archive.try_read("weights", weights))
            for (const std::string& name : weights.keys()) {
                torch::Tensor tensor;
                if (weights.try_read(name, tensor))
                    out.weights.emplace_back(name, tensor);
            }
    } catch (const std::exception& e) {
        return makeError("unreadable contents: " + userMessage(e));
    }
    return out;
}

} // namespace d2dpo
