// SPDX-License-Identifier: GPL-3.0-or-later
// The D2-DPO settings of the Train view: beta, eta, learning rate, batch, steps, the estimator
// (t-samples per pair, VRPO samples, stratified t, complementary masks), the loss (TRL's loss
// types, label smoothing, rpo_alpha), the best checkpoint's metric, evaluation cadence and size,
// the sampler, seed and device, with the paper experiment's defaults. Every field is checked as it is typed; what is wrong is said in words
// under the form (beta <= 0, a batch that would not fit in memory...), and settings() is empty
// until everything is right. The values persist in QSettings.
#pragma once

#include <QStringList>
#include <QWidget>

#include <optional>

#include "base/config.h"
#include "base/measurement.h"
#include "base/samplebudget.h"

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;

namespace d2dpo::ui {

struct TrainSettings {
    DpoConfig dpo;
    DpoScheduleConfig schedule;
    SamplingConfig sampling;
    /// > 0 ("auto" in the form): evaluations draw as many samples as fit in about this time at
    /// the reference's cost, at most schedule.evalSamples (DpoJobSpec::evalSeconds).
    double evalSeconds = kMeasurementSeconds;
    double eta = 0;
    uint64_t seed = 0;
    QString device = QStringLiteral("auto");
};

class TrainSettingsForm final : public QWidget {
    Q_OBJECT

public:
    explicit TrainSettingsForm(QWidget* parent = nullptr);

    /// The settings when every field is valid, else nothing (see problems()).
    std::optional<TrainSettings> settings() const;
    /// One sentence per problem, empty when the settings are usable.
    QStringList problems() const { return m_problems; }
    /// The model to be fine-tuned (its size sets what fits in memory); nothing: no memory check.
    void setModelSpec(const std::optional<ModelSpec>& spec);
    /// Available memory in bytes for the memory check (tests); -1 reads /proc/meminfo.
    void setAvailableMemoryOverride(int64_t bytes);

    void setValues(const TrainSettings& values);
    void restoreDefaults();
    void loadSettings();
    void saveSettings() const;

Q_SIGNALS:
    void validityChanged(bool valid);

private:
    QLineEdit* addField(const QString& key, const QString& label, const QString& tip);
    /// A choice among `values` (shown as `labels`), stored under `key`.
    QComboBox* addChoice(const QString& key, const QString& label, const QString& tip, const QStringList& values,
                         const QStringList& labels);
    void revalidate();

    QLineEdit* m_beta = nullptr;
    QLineEdit* m_eta = nullptr;
    QLineEdit* m_learningRate = nullptr;
    QLineEdit* m_batch = nullptr;
    QLineEdit* m_batchPiece = nullptr;
    QLineEdit* m_loraRank = nullptr;
    QLineEdit* m_steps = nullptr;
    QLineEdit* m_tSamples = nullptr;
    QLineEdit* m_evalEvery = nullptr;
    QLineEdit* m_evalSamples = nullptr;
    QLineEdit* m_samplingSteps = nullptr;
    QLineEdit* m_seed = nullptr;
    QComboBox* m_device = nullptr;
    QLineEdit* m_vrpoSamples = nullptr;
    QComboBox* m_precision = nullptr;
    QComboBox* m_tSampling = nullptr;
    QComboBox* m_maskCoupling = nullptr;
    QComboBox* m_lossType = nullptr;
    QLineEdit* m_labelSmoothing = nullptr;
    QLineEdit* m_rpoAlpha = nullptr;
    QComboBox* m_keepBest = nullptr;
    QComboBox* m_sampler = nullptr;
    QLabel* m_problemLabel = nullptr;
    std::optional<ModelSpec> m_spec;
    int64_t m_memoryOverride = -1;
    std::optional<TrainSettings> m_settings;
    QStringList m_problems;
    bool m_valid = false;
    QFormLayout* m_form = nullptr;
};

} // namespace d2dpo::ui
