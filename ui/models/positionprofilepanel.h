// SPDX-License-Identifier: GPL-3.0-or-later
// What a model's samples look like per position, against its reference's and the training data
// (issue 27): the two sequence logos one above the other on the same positions (reference, then
// the model), the composition per symbol (training data, reference, model) and the identity of
// each sample to its nearest training sequence (mean, median, copies, histogram). "Export…"
// writes logos.png, logos.svg, positions.csv, composition.csv and nearest.csv into a folder the
// user picks. The figures are core's (analysis/); this widget lays them out and draws them.
#pragma once

#include <QString>
#include <QWidget>

#include <string>
#include <vector>

#include "analysis/profilecsv.h"
#include "base/result.h"

class QCustomPlot;
class QLabel;
class QPainter;
class QPushButton;
class QScrollArea;

namespace d2dpo {
class TaskInfo;
}

namespace d2dpo::ui {

class SequenceLogo;

/// What the panel shows: the samples as the task's text (trailing pads '.' or none).
struct PositionProfileInputs {
    std::vector<std::string> samples;          ///< the model's samples
    std::vector<std::string> referenceSamples; ///< its reference's; empty: no reference logo
    std::vector<std::string> training;         ///< the training sequences; empty: no nearest identity
    std::string symbols;                       ///< the vocabulary, one character per symbol, pad excluded
    QString alphabet = QStringLiteral("text"); ///< colours and nothing else: TaskInfo::alphabet()
    QString modelName = QStringLiteral("model");
    QString referenceName = QStringLiteral("reference");
    int length = 0; ///< positions to show (the task's length); 0: the longest sequence

    /// The task's part (symbols, alphabet, training sequences, length); the caller adds the samples.
    static PositionProfileInputs fromTask(const TaskInfo& task);
};

/// The three profiled sets and the positions they share: what the panel computes from its inputs
/// before it draws anything.
struct PositionProfiles {
    ProfiledSet training;
    ProfiledSet reference;
    ProfiledSet model;
    int64_t length = 0;
};

class PositionProfilePanel final : public QWidget {
    Q_OBJECT

public:
    explicit PositionProfilePanel(QWidget* parent = nullptr);

    /// Profiles the inputs and redraws everything, synchronously: measured at 2 ms for the profile
    /// of 2000 samples of length 1000, and 30-60 ms for their nearest identities against 45
    /// proteins of length 1000 or 2000 words against 44,000 (analysis/nearestidentity.h).
    void setInputs(const PositionProfileInputs& inputs);
    /// setInputs' figures without the drawing: touches no widget, so it runs on any thread (the
    /// Models view profiles in the background, with the task's training sequences drawn there too).
    static PositionProfiles profile(const PositionProfileInputs& inputs);
    /// Draws `profiles`, computed by profile() from `inputs`.
    void showProfiles(PositionProfiles profiles, const PositionProfileInputs& inputs);
    /// Shows nothing (no model picked).
    void clear();

    /// Writes logos.png, logos.svg and the three CSVs into `folder` (which must exist); files of
    /// the same names there are replaced, each all or nothing. An error names the file.
    Status exportTo(const QString& folder) const;

    const ProfiledSet& modelSet() const { return m_model; }
    const ProfiledSet& referenceSet() const { return m_reference; }
    const ProfiledSet& trainingSet() const { return m_training; }
    bool hasReference() const { return !m_reference.sequences.empty(); }
    const SequenceLogo* modelLogo() const { return m_modelLogo; }
    const SequenceLogo* referenceLogo() const { return m_referenceLogo; }
    /// The nearest-identity figures as shown ("model: mean 0.620, median 0.600; copies of a
    /// training sequence: 3 (0.2%)").
    QString identityText() const;

Q_SIGNALS:
    /// After an export from the button: the folder written.
    void exported(const QString& folder);

private:
    void exportFromDialog();
    void drawComposition();
    void drawIdentity();
    /// The logos as laid out on screen (reference above the model), for PNG and SVG.
    QSize logosSize() const;
    void renderLogos(QPainter& painter) const;
    std::vector<const ProfiledSet*> shownSets() const;

    ProfiledSet m_training;
    ProfiledSet m_reference;
    ProfiledSet m_model;
    QString m_alphabet;

    QLabel* m_summary = nullptr;
    QScrollArea* m_logoScroll = nullptr;
    SequenceLogo* m_referenceLogo = nullptr;
    SequenceLogo* m_modelLogo = nullptr;
    QCustomPlot* m_composition = nullptr;
    QCustomPlot* m_identityPlot = nullptr;
    QLabel* m_identity = nullptr;
    QPushButton* m_export = nullptr;
};

} // namespace d2dpo::ui
