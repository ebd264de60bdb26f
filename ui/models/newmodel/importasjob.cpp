// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/newmodel/importasjob.h"

#include "ui/common/phaseforwarder.h"

namespace d2dpo::ui {

FinishedEvent importAsTrainJob(const ImportJobSpec& job, TrainListener& listener, const StopToken& stop)
{
    PhaseForwarder forward(listener);
    FinishedEvent done;
    auto outcome = runImportJob(job, forward, stop, [&forward](double drawn, int64_t total) {
        forward.onSamplingProgress(drawn, total);
    });
    if (!outcome) {
        done.status = RunStatus::Failed;
        done.error = outcome.error();
    } else {
        done.status = outcome->stopped ? RunStatus::Stopped : RunStatus::Completed;
        if (!outcome->stopped) // a Cancel writes nothing (ImportJobSpec::keepWhenStopped)
            done.lastCheckpointPath = job.outputPath;
        if (!outcome->stopped && outcome->measured) // the dialog says its figures, and whether it can be labelled
            listener.onEvaluation({0, outcome->metrics, true});
    }
    return done;
}

} // namespace d2dpo::ui
