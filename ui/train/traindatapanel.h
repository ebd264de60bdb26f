// SPDX-License-Identifier: GPL-3.0-or-later
// The Train view's "Model and preferences" box: the reference model (the policy starts equal to
// it), the preferences to train on (the experts' labels in the store, or rule-made pairs) and how
// many pairs that gives, said in words; labels of other tasks' sequences are counted and left out.
// The labelers of the reference's task are listed with their decisive-label counts: people ticked,
// simulated experts (rule:*) listed apart and unticked unless chosen; only ticked ones train.
// The summary keeps room for three lines, so a tick moves no field below it.
#pragma once

#include <QFutureWatcher>
#include <QGroupBox>
#include <QHash>
#include <QStringList>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/config.h"
#include "jobs/dpojob.h"
#include "store/preferencestore.h"

class QComboBox;
class QLabel;
class QListWidget;
class QRadioButton;
class QSpinBox;

namespace d2dpo::ui {

class TrainDataPanel final : public QGroupBox {
    Q_OBJECT

public:
    explicit TrainDataPanel(PreferenceStore& store, QWidget* parent = nullptr);

    /// Lists the store's models again (keeping the selection, else the newest), then counts the
    /// pairs; a store error goes out as a log line.
    void reload();
    /// The same, read on the long-job pool through a connection of its own (the pair count of the
    /// labels too, read ahead), shown when it arrives.
    void reloadInBackground();
    /// Selects the reference model by its store id.
    bool selectReference(const QString& modelId);
    void useRulePairs(bool rulePairs, int count);
    /// Locks the choices while a run trains.
    void setEditable(bool editable);

    std::optional<ModelRecord> selectedModel() const;
    /// The selected model's spec; none when no model is selected or its spec does not parse.
    std::optional<ModelSpec> selectedSpec() const;
    bool rulePairs() const;
    /// Where the pairs come from: labels, rule-made pairs, an assay's values, or labels and values.
    PreferenceSource source() const;
    /// The measured source's choices (the assay, how pairs are made, the labels' share).
    class MeasuredSourceBox* measuredSource() const { return m_measured; }
    /// Chooses an assay's values (and the labels beside them at `labelsShare` of each batch).
    void useMeasurements(const QString& assay, bool withLabels = false, double labelsShare = 0.5);
    int rulePairCount() const;
    /// The ticked labelers (with the store's labels as the source).
    std::vector<std::string> chosenLabelers() const;
    /// Ticks or unticks a listed labeler; false when it is not listed.
    bool setLabelerChosen(const QString& labeler, bool chosen);
    /// Pairs the chosen source gives for the chosen model (0 when none or not usable).
    qint64 pairCount() const { return m_pairCount; }
    /// The pair count in words, or why there are none.
    QString summary() const;

Q_SIGNALS:
    /// Another reference model is selected (the pair count follows).
    void referenceChanged();
    /// The pair count was counted again.
    void pairCountChanged();
    void logLine(const QString& line);

private:
    /// What a reload reads (traindatapanelread.cpp), on any thread: the models with their labels
    /// and whether each is a finished model, and, read ahead for each task listed, its labelers
    /// and the pairs usable with the labelers `ticked` as they were.
    struct Choices {
        struct Reference {
            ModelRecord model;
            QString label;
            bool finished = true;
        };
        struct Counts {
            Result<std::vector<LabelerCount>> labelers = makeError("not read");
            std::vector<std::string> chosen;
            Result<UsablePairs> usable = makeError("not read");
        };
        bool ok = false;
        std::vector<Reference> references;
        std::map<std::string, Counts> countsByTask;
        QStringList problems;
    };
    static Choices readChoices(PreferenceStore& store, const QHash<QString, bool>& ticked, bool countPairs);
    /// The labelers who are ticked (people unless unticked, simulated experts once ticked).
    static std::vector<std::string> chosenOf(const std::vector<LabelerCount>& labelers,
                                             const QHash<QString, bool>& ticked);
    /// A task's labelers and the pairs usable with the labelers `ticked`.
    static Choices::Counts readCounts(PreferenceStore& store, const std::string& task,
                                      const QHash<QString, bool>& ticked);
    /// Whether the counts read ahead for `task` answer the ticks as they are now.
    bool countedAhead(const std::string& task) const;
    /// A team store's count, off the window's thread; updatePairCount() shows it when it lands.
    void countInBackground(const std::string& task);
    void showChoices(const Choices& choices);
    Result<std::vector<LabelerCount>> labelersOf(const std::string& task);
    Result<UsablePairs> usablePairs(const std::string& task, const std::vector<std::string>& chosen);

    void updatePairCount();
    /// The labelled pairs the ticked labelers give (and the list of labelers), said in words;
    /// `pending` while a team store's count is on its way.
    QString countLabelPairs(const ModelRecord& model, qint64& pairs, bool& pending);
    /// The pairs the chosen assay's values give, said in words (the assays of the model's task listed).
    QString countMeasuredPairs(const ModelRecord& model, qint64& pairs);
    void listLabelers(const std::vector<LabelerCount>& labelers);

    PreferenceStore& m_store;
    QComboBox* m_reference = nullptr;
    QRadioButton* m_fromLabels = nullptr;
    QRadioButton* m_fromRule = nullptr;
    QRadioButton* m_fromMeasurements = nullptr;
    class MeasuredSourceBox* m_measured = nullptr;
    QSpinBox* m_rulePairs = nullptr;
    QListWidget* m_labelers = nullptr;
    QHash<QString, bool> m_ticked; ///< the user's ticks, kept while the list is rebuilt
    QHash<QString, ModelRecord> m_models; ///< the list's models by id, as the last reload read them
    std::map<std::string, Choices::Counts> m_readAhead; ///< a background reload's counts, for its first count
    std::shared_ptr<class OwnConnection> m_reader;
    std::shared_ptr<class OwnConnection> m_counter; ///< a team store's counts (one read at a time each)
    QFutureWatcher<Choices::Counts>* m_counting = nullptr;
    std::string m_countedTask; ///< the task the count on its way is for; empty: counted again when it lands
    QFutureWatcher<Choices>* m_choices = nullptr;
    bool m_again = false;
    bool m_editable = true;
    bool m_reloadWhenEditable = false; ///< a list that landed while a run trained: read again after it
    QString m_pendingReference;        ///< chosen while the list was on its way: selected when it lands
    QLabel* m_pairSummary = nullptr;
    qint64 m_pairCount = 0;
};

} // namespace d2dpo::ui
