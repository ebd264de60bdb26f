// SPDX-License-Identifier: GPL-3.0-or-later
// "New model from a data file…": the user picks a FASTA or line file, its vocabulary, what a
// valid sample is, the rule its metrics measure, the model's size (presets, with the parameter
// count and the memory a D2-DPO step needs) and the pretraining steps; the file is read at
// once (its summary, or the error naming the line, shows in space kept for it, so no field moves
// under the pointer) and the reference is pretrained in the background. Each phase says what it
// does: the steps with an ETA, the evaluation's samples with an ETA, then the write. Cancel works
// in every phase (within a training step or a sampler batch) and then adds nothing to the store.
#pragma once

#include <QDialog>
#include <QElapsedTimer>

#include <atomic>
#include <string>

#include "base/config.h"
#include "base/trainlistener.h"

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QSpinBox;

namespace d2dpo::ui {

class TrainRunner;

class DataModelDialog final : public QDialog {
    Q_OBJECT

public:
    const QString& storePath() const { return m_storePath; }
    /// New checkpoints go to `modelFolder`; the model is added to the store at `storePath`.
    DataModelDialog(const QString& storePath, const QString& modelFolder, QWidget* parent = nullptr);
    ~DataModelDialog() override;

    /// Sets the data file (what the Browse… button does) and reads it.
    void setDataFile(const QString& path);
    /// Starts pretraining (what the Create button does); false when the inputs are not usable.
    bool start();
    bool busy() const;
    QString lastError() const { return m_error; }
    QString createdCheckpoint() const { return m_created; }
    /// The new model's figures ("VSR 0.972 on 200 samples"), once made and measured; else "".
    QString madeFigures() const { return m_madeFigures; }
    /// Whether the model made is too weak to label (its advice stays on the dialog, which stays open).
    bool madeTooWeak() const { return m_madeTooWeak; }

Q_SIGNALS:
    void modelCreated(const QString& checkpointPath);

protected:
    void reject() override;

private:
    void readFile();
    /// The chosen size's shape for a task of `length` positions.
    ModelConfig chosenModel() const;
    void describeSize(int length);
    /// What the job does now: each has its own text and progress.
    enum class Phase { Idle, Pretraining, Evaluating, Writing };
    void enterPhase(Phase phase, qint64 total);
    void onProgress(qint64 done, qint64 total, double loss);
    void onFinished(const FinishedEvent& done);
    void onMeasured(const EvaluationEvent& made);
    /// The fields as the last Create left them (QSettings), and saving them: a Cancel forgets nothing.
    void restoreFields();
    void saveFields() const;

    QString m_storePath;
    QString m_modelFolder;
    QLineEdit* m_file = nullptr;
    QComboBox* m_vocabulary = nullptr;
    QComboBox* m_validity = nullptr;
    QLineEdit* m_rule = nullptr;
    QSpinBox* m_steps = nullptr;
    QComboBox* m_size = nullptr;   ///< a preset of d_model, layers, heads
    QLabel* m_sizeNote = nullptr;  ///< its parameter count and the memory a D2-DPO step needs
    QLabel* m_summary = nullptr;   ///< the file's summary or its error, in space kept for it
    QLabel* m_phase = nullptr;     ///< what the job does now ("Evaluating the model: 800 / 2,000 samples")
    QProgressBar* m_progress = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    TrainRunner* m_runner = nullptr; ///< pretraining runs as a training job (docs/architecture.md)
    Phase m_current = Phase::Idle;
    qint64 m_samples = 0;          ///< the evaluation's sample count, once the job has fitted it
    QElapsedTimer m_phaseClock;    ///< since the current phase began: its rate, hence its ETA
    bool m_stopping = false;
    QString m_error;
    QString m_created;
    bool m_fileUsable = false;
    QString m_madeFigures;
    bool m_madeTooWeak = false;
};

} // namespace d2dpo::ui
