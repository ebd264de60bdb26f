// SPDX-License-Identifier: GPL-3.0-or-later
// The core's training events as Qt meta-types, so that they travel through queued signals and
// QVariant. Every ui/ header that names them in a signal or slot includes this first.
#pragma once

#include <QMetaType>

#include "base/trainlistener.h"

Q_DECLARE_METATYPE(d2dpo::ProgressEvent)
Q_DECLARE_METATYPE(d2dpo::EvaluationEvent)
Q_DECLARE_METATYPE(d2dpo::CheckpointEvent)
Q_DECLARE_METATYPE(d2dpo::FinishedEvent)
Q_DECLARE_METATYPE(d2dpo::RunStatus)
