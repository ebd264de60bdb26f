// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/modeldetails.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

#include <algorithm>

#include "base/config.h"
#include "base/metricnames.h"
#include "base/samplemetrics.h"
#include "facades/taskinfo.h"

namespace d2dpo::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("ModelDetails", text); }

QJsonObject parseObject(const std::string& json)
{
    return QJsonDocument::fromJson(QByteArray::fromStdString(json)).object();
}

} // namespace

QString modelDetails(PreferenceStore& store, const ModelRecord& model, const std::optional<ModelRecord>& reference,
                     const SampleMetrics* measured, const RunBrief* brief)
{
    const QJsonObject metrics = parseObject(model.metricsJson);
    QStringList lines;
    lines << tr("<b>%1</b> &nbsp; <code>%2</code> (%3)")
                 .arg(QString::fromStdString(model.name).toHtmlEscaped(), QString::fromStdString(model.id),
                      QString::fromStdString(model.kind));
    lines << tr("Trained from: %1")
                 .arg(reference ? QStringLiteral("%1 <code>%2</code>")
                                      .arg(QString::fromStdString(reference->name).toHtmlEscaped(),
                                           QString::fromStdString(reference->id))
                                : model.parentId.empty() ? tr("— (a pretrained root)")
                                                          : QString::fromStdString(model.parentId));
    if (model.runId) {
        auto run = brief ? Result<std::optional<RunRecord>>(brief->record) : store.run(*model.runId);
        if (run && run.value()) {
            const QJsonObject config = parseObject(run.value()->configJson);
            const QJsonObject prefs = config.value(QStringLiteral("preferences")).toObject();
            const QJsonObject dpo = config.value(QStringLiteral("dpo")).toObject();
            const QString source = prefs.value(QStringLiteral("source")).toString();
            // What the run did, not only what it planned: a stopped run says where it stopped.
            qint64 done = brief ? brief->lastStep : 0;
            if (!brief)
                if (const auto loss = store.metricSeries(*model.runId, "loss"); loss && !loss->empty())
                    done = loss->back().first;
            const qint64 planned = dpo.value(QStringLiteral("steps")).toInteger();
            const QString status = QString::fromLatin1(toString(run.value()->status));
            const QString state = done < planned ? tr("%1 at step %L2 of %L3").arg(status).arg(done).arg(planned)
                                                 : tr("%1, %L2 steps").arg(status).arg(done);
            lines << tr("Run #%1 (%2, %3): %L4 %5; beta %6, lr %7, batches of %8 pairs")
                         .arg(*model.runId)
                         .arg(state, QString::fromStdString(run.value()->device))
                         .arg(prefs.value(QStringLiteral("pairs")).toInteger())
                         .arg(source == QLatin1String("store-labels")   ? tr("expert-labelled pairs")
                              : source == QLatin1String("measurements") ? tr("measured pairs (assay %1)")
                                                                              .arg(prefs.value(QStringLiteral("assay")).toString())
                              : source.contains(QLatin1String("measurements"))
                                  ? tr("pairs: %L1 expert-labelled, %L2 measured (assay %3)")
                                        .arg(prefs.value(QStringLiteral("label_pairs")).toInteger())
                                        .arg(prefs.value(QStringLiteral("measured_pairs")).toInteger())
                                        .arg(prefs.value(QStringLiteral("assay")).toString())
                                  : tr("rule-made pairs"))
                         .arg(dpo.value(QStringLiteral("beta")).toDouble())
                         .arg(dpo.value(QStringLiteral("learning_rate")).toDouble())
                         .arg(dpo.value(QStringLiteral("batch")).toInteger());
        }
    }
    // One figure per model: the samples drawn in the view when there are, else the figures recorded
    // when the model was made, always with how they were drawn (the tree shows the same).
    std::optional<SampleMetrics> shown;
    if (measured)
        shown = *measured;
    else if (auto recorded = sampleMetricsFromJson(model.metricsJson); recorded && !metrics.isEmpty())
        shown = recorded.value();
    if (shown) {
        QStringList values;
        for (const MetricValue& v : shown->values) // the tree's "Rule share" named as such here too
            values << QStringLiteral("%1 %2")
                          .arg(v.name == shown->ruleMetric ? tr("rule share (%1)").arg(QString::fromStdString(v.name))
                                                           : QString::fromStdString(v.name))
                          .arg(v.value, 0, 'f', 4);
        lines << tr("Figures: %1 (%2; %3)")
                     .arg(values.join(QStringLiteral(", ")).toHtmlEscaped(),
                          QString::fromStdString(shown->provenance()).toHtmlEscaped(),
                          measured ? tr("drawn here") : tr("recorded when it was made"));
    }
    if (auto task = TaskInfo::ofModel(store, model))
        lines << tr("Task: %1%2")
                         .arg(QString::fromStdString(task->summary()).toHtmlEscaped())
                         .arg(task->hasRule() ? tr("; rule %1").arg(QString::fromStdString(task->ruleSpec()).toHtmlEscaped())
                                              : QString());
    if (auto spec = modelSpecFromJson(model.specJson)) {
        const ModelConfig& m = spec->model;
        lines << (m.isPublishedWeights()
                      ? tr("Model: %1 read from its published weights in %2 (%3 parameters, run on d2dpo's kernels)")
                            .arg(QString::fromStdString(m.architecture).toHtmlEscaped())
                            .arg(QString::fromStdString(m.source).toHtmlEscaped())
                            .arg(m.parameters)
                  : m.isTorchScript()
                      ? tr("Model: TorchScript, brought in from %1 (%2 parameters, %3 token ids)")
                            .arg(QString::fromStdString(m.source).toHtmlEscaped())
                            .arg(m.parameters)
                            .arg(m.vocabulary.size)
                      : tr("Model: transformer, d_model %1, %2 layers, %3 heads").arg(m.dModel).arg(m.layers).arg(m.heads));
    }
    lines << tr("File: <code>%1</code>").arg(QString::fromStdString(model.path).toHtmlEscaped());
    if (!QFileInfo::exists(QString::fromStdString(model.path)))
        lines << tr("<span style='color:#b3261e'>The checkpoint file is missing.</span>");
    return lines.join(QStringLiteral("<br>"));
}

QString samplesText(const ModelSummary& summary, int shown)
{
    const int count = std::min<int>(shown, int(summary.samples.size()));
    int width = 0;
    for (int i = 0; i < count; ++i)
        width = std::max(width, int(summary.samples[size_t(i)].size()));
    QStringList rows;
    for (int i = 0; i < count; ++i) {
        // The annotation in its own column after the longest sample, never stuck to a long line.
        const SequenceHint& hint = summary.hints[size_t(i)];
        const QString note = QString::fromStdString(hint.value) +
                             (hint.rule.empty() ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(hint.rule)));
        rows << QStringLiteral("%1  %2   %3")
                    .arg(i + 1, 3)
                    .arg(QString::fromStdString(summary.samples[size_t(i)]), -width)
                    .arg(note);
    }
    QStringList figures;
    for (const MetricValue& v : summary.metrics.values)
        figures << QStringLiteral("%1 %2").arg(QString::fromStdString(v.name)).arg(v.value, 0, 'f', 4);
    return tr("Measured on these samples: %1\n(%2)\n\nThe first %3 of %4 samples:\n")
               .arg(figures.join(QStringLiteral(", ")), QString::fromStdString(summary.metrics.provenance()))
               .arg(count)
               .arg(summary.samples.size()) +
           rows.join(QLatin1Char('\n'));
}

} // namespace d2dpo::ui
