// SPDX-License-Identifier: GPL-3.0-or-later
#include "facades/checkpointrecord.h"

#include "io/checkpoint.h"

#include <nlohmann/json.hpp>

namespace d2dpo {

ModelRecord modelRecordFor(const CheckpointInfo& info, const std::string& path, const std::string& name)
{
    ModelRecord model;
    model.id = info.id;
    model.parentId = info.parentId;
    model.kind = info.kind;
    model.name = name;
    model.path = path;
    model.specJson = toJson(info.spec, /*withData=*/false);
    model.taskKey = taskKey(info.spec.task);
    model.taskSpecJson = taskConfigToJson(info.spec.task).dump();
    model.trainingJson = info.trainingJson;
    model.metricsJson = info.metricsJson;
    model.createdAt = info.createdAt;
    return model;
}

} // namespace d2dpo
