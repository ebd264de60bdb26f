// SPDX-License-Identifier: GPL-3.0-or-later
// "Import model…": a denoiser trained elsewhere, as published ESM2, DPLM or MDLM weights (a
// folder with model.safetensors, config.json and vocab.txt, read as data; docs/published-weights.md) or as
// TorchScript with its vocabulary file (docs/own-model.md), brought in with the fields of `d2dpo import`: the model, the
// vocabulary, the task (a data file's sequences or the paper's binary integers), what a valid
// sample is and the rule. The import runs in the background and says each phase: checking the
// files, loading, probing, the measurement's samples with an ETA, the write; the model is then
// added to the store with its task. Cancel works in every phase (after the step in flight, or
// within a sampler batch) and then writes and adds nothing. Every refusal (a state dict offered
// as TorchScript, a forward of another signature, a vocabulary whose ids collide) shows in the
// dialog, and nothing is written.
#pragma once

#include <QDialog>
#include <QElapsedTimer>

#include "base/trainlistener.h"

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QSpinBox;

namespace d2dpo::ui {

class TrainRunner;

class ImportModelDialog final : public QDialog {
    Q_OBJECT

public:
    /// New checkpoints go to `modelFolder`; the model is added to the store at `storePath`.
    ImportModelDialog(const QString& storePath, const QString& modelFolder, QWidget* parent = nullptr);
    ~ImportModelDialog() override;

    void setTorchScriptFile(const QString& path);
    /// The model: a TorchScript file, or published weights (a folder or its model.safetensors).
    void setModelPath(const QString& path);
    void setVocabularyFile(const QString& path);
    void setDataFile(const QString& path);
    /// "sequences" or "binary-integers".
    void setTask(const QString& task);
    /// Samples measuring the imported model: -1 Auto (as many as fit in about 30 s), 0 none.
    void setEvaluationSamples(int samples);
    /// Starts the import (what the Import button does); false when a field is missing.
    bool start();
    bool busy() const;
    QString lastError() const { return m_error; }
    QString createdCheckpoint() const { return m_created; }
    /// The imported model's figures ("VSR 0.972 on 200 samples"), once measured; else "".
    QString madeFigures() const { return m_madeFigures; }
    const QString& storePath() const { return m_storePath; }
    /// Whether it measured too weak to label (the advice stays on the dialog, which stays open).
    bool madeTooWeak() const { return m_madeTooWeak; }

Q_SIGNALS:
    void modelImported(const QString& checkpointPath);

protected:
    void reject() override;

private:
    /// What the job does now: each has its own text and progress.
    enum class Phase { Idle, Checking, Loading, Probing, Evaluating, Writing };
    void enterPhase(Phase phase);
    void onProgress(qint64 done, qint64 total);
    void onLogLine(const QString& line);
    void onFinished(const FinishedEvent& done);
    void onMeasured(const EvaluationEvent& made);
    void showError(const QString& message);
    bool modelIsPublishedWeights() const;
    /// Names the architecture of published weights under the model field, or why they cannot be read.
    void recogniseModel();

    QString m_storePath;
    QString m_proposedVocabulary; ///< the file found beside the model, replaced only while untouched
    QString m_modelFolder;
    QLineEdit* m_torchScript = nullptr;
    QLineEdit* m_vocabulary = nullptr;
    QLabel* m_recognised = nullptr; ///< the architecture published weights name, under the model field
    QComboBox* m_task = nullptr;
    QLineEdit* m_data = nullptr;
    QComboBox* m_validity = nullptr;
    QSpinBox* m_shortest = nullptr; ///< without data: 0 = auto
    QSpinBox* m_longest = nullptr;  ///< without data
    QLineEdit* m_rule = nullptr;
    QSpinBox* m_evaluationSamples = nullptr; ///< -1: Auto (fitted to kMeasurementSeconds), 0: not measured
    QLabel* m_summary = nullptr;   ///< the job's last word (what was loaded, probed) or its error
    QLabel* m_phase = nullptr;     ///< what the job does now ("Evaluating the model: 250 / 1,000 samples")
    QProgressBar* m_progress = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    TrainRunner* m_runner = nullptr; ///< the import runs as a training job (docs/architecture.md)
    Phase m_current = Phase::Idle;
    QString m_madeFigures;
    bool m_madeTooWeak = false;
    qint64 m_samples = 0;          ///< the measurement's sample count; 0 while a fitted one is not known
    QElapsedTimer m_phaseClock;    ///< since the current phase began: its rate, hence its ETA
    bool m_stopping = false;
    QString m_error;
    QString m_created;
};

} // namespace d2dpo::ui
