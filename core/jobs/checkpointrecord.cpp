// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/checkpointrecord.h"

#include "io/checkpoint.h"

namespace d2dpo {

ModelRecord modelRecordFor(const CheckpointInfo& info, const std::string& path, const std::string& name)
{
    ModelRecord model;
    model.id = info.id;
    model.parentId = info.parentId;
    model.kind = info.kind;
    model.name = name;
    model.path = path;
    model.specJson = toJson(info.spec);
    model.trainingJson = info.trainingJson;
    model.metricsJson = info.metricsJson;
    model.createdAt = info.createdAt;
    return model;
}

} // namespace d2dpo
