// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/heldoutpanel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>
#include <utility>

#include "store/preferencestore.h"
#include "ui/common/longjobs.h"
#include "ui/common/measuredpairchoices.h"
#include "ui/common/ownconnection.h"
#include "ui/common/readonlycell.h"

namespace d2dpo::ui {

namespace {

QString figure(double value) { return std::isnan(value) ? QStringLiteral("—") : QString::number(value, 'f', 3); }

} // namespace

HeldOutPanel::HeldOutPanel(PreferenceStore& store, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_watcher(new QFutureWatcher<Result<AssayEvalResult>>(this))
    , m_reading(new QFutureWatcher<Preset>(this))
    , m_reader(std::make_shared<OwnConnection>(store.path()))
{
    connect(m_reading, &QFutureWatcherBase::finished, this, [this] { showPreset(m_reading->result()); });
    auto* layout = new QVBoxLayout(this);
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Assay:"), this));
    m_assay = new QComboBox(this);
    m_assay->setObjectName(QStringLiteral("heldOutAssay"));
    m_assay->setMinimumContentsLength(12);
    row->addWidget(m_assay, 1);
    row->addWidget(new QLabel(tr("held out:"), this));
    const HeldOutChoice heldOut = makeHeldOutChoice(this, 0.01);
    m_heldOut = heldOut.share;
    m_split = heldOut.split;
    row->addWidget(m_heldOut);
    row->addWidget(m_split);
    m_score = new QPushButton(tr("&Score"), this);
    m_score->setObjectName(QStringLiteral("scoreHeldOut"));
    row->addWidget(m_score);
    layout->addLayout(row);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    m_table = new QTableWidget(0, 4, this);
    m_table->setObjectName(QStringLiteral("heldOutFigures"));
    m_table->setHorizontalHeaderLabels({tr("Score"), tr("Model"), tr("Spearman"), tr("Pairs ordered right")});
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setVisible(false);
    layout->addWidget(m_table, 1);
    connect(m_score, &QPushButton::clicked, this, &HeldOutPanel::score);
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        const Result<AssayEvalResult> result = m_watcher->result();
        m_score->setEnabled(m_model.has_value());
        if (!result) {
            m_status->setText(tr("Not scored: %1").arg(QString::fromStdString(result.error())));
            Q_EMIT scored(false);
            return;
        }
        m_results.insert(m_scoringKey, result.value());
        if (m_model && key(chosenSpec()) == m_scoringKey)
            showResult(result.value());
        Q_EMIT scored(true);
    });
}

HeldOutPanel::~HeldOutPanel() { m_watcher->waitForFinished(); }

QString HeldOutPanel::statusText() const { return m_status->text(); }

void HeldOutPanel::showModel(const ModelRecord& model)
{
    const bool same = m_model && m_model->id == model.id;
    m_model = model;
    if (same && !m_reading->isRunning())
        return; // the same model again (samples drawn since): its choices stay as the user left them
    m_table->setRowCount(0);
    m_score->setEnabled(false);
    m_status->setText(tr("Reading the assays of this model's task…"));
    if (m_reading->isRunning())
        return; // read again for the model shown now when the read on its way lands
    m_reading->setFuture(QtConcurrent::run(storeReadPool(), [reader = m_reader, model]() -> Preset {
        Preset preset;
        preset.modelId = QString::fromStdString(model.id);
        auto store = reader->get();
        if (!store) {
            preset.error = QString::fromStdString(store.error());
            return preset;
        }
        auto assays = store.value()->assays();
        if (!assays) {
            preset.error = QString::fromStdString(assays.error());
            return preset;
        }
        for (const AssayRecord& a : assays.value())
            if (a.task == model.taskKey)
                preset.assays << QString::fromStdString(a.name);
        if (auto trained = measuredSplitOfRun(*store.value(), model, model.path); trained)
            preset.trained = trained.value();
        return preset;
    }));
}

void HeldOutPanel::showPreset(const Preset& preset)
{
    if (!m_model)
        return;
    if (preset.modelId != QString::fromStdString(m_model->id)) {
        const ModelRecord model = *std::exchange(m_model, std::nullopt);
        showModel(model); // another model was chosen while this one was read
        return;
    }
    if (!preset.error.isEmpty()) {
        m_status->setText(tr("Cannot read the measurements: %1").arg(preset.error));
        return;
    }
    {
        const QSignalBlocker block(m_assay);
        m_assay->clear();
        m_assay->addItems(preset.assays);
    }
    m_score->setEnabled(m_assay->count() > 0 && !scoring());
    if (m_assay->count() == 0) {
        m_status->setText(tr("No measurements of this model's task in the store (the Measurements view imports them)."));
        return;
    }
    // A model trained on measurements: its run's assay and split, so that the figures are on
    // values it never saw.
    QString said = tr("Scores the held-out sequences by the likelihood bound (ELBO) of the model and its reference, "
                      "and by the fine-tuned model's implicit reward.");
    if (preset.trained) {
        const AssayPairsSpec& split = *preset.trained;
        m_assay->setCurrentText(QString::fromStdString(split.assay));
        if (split.heldOut > 0)
            m_heldOut->setValue(split.heldOut);
        m_split->setCurrentIndex(std::max(0, m_split->findData(QString::fromStdString(split.split))));
        said = split.heldOut > 0 ? tr("Trained on '%1' with %2 of it held out (%3 split): these are the values it "
                                      "never saw.")
                                       .arg(QString::fromStdString(split.assay))
                                       .arg(split.heldOut)
                                       .arg(QString::fromStdString(split.split))
                                 : tr("Trained on all of '%1': no value of it is unseen. Choose another assay, "
                                      "or train with a held-out share.")
                                       .arg(QString::fromStdString(split.assay));
    }
    m_status->setText(said);
    if (const auto found = m_results.constFind(key(chosenSpec())); found != m_results.constEnd())
        showResult(*found);
    Q_EMIT presetShown();
}

AssayEvalSpec HeldOutPanel::chosenSpec() const
{
    AssayEvalSpec spec;
    spec.storePath = m_store.path();
    spec.checkpoint = m_model ? m_model->path : std::string();
    spec.split.assay = m_assay->currentText().toStdString();
    spec.split.heldOut = m_heldOut->value();
    spec.split.split = m_split->currentData().toString().toStdString();
    spec.splitFromRun = false; // as shown: the run's split is preset above
    return spec;
}

QString HeldOutPanel::key(const AssayEvalSpec& spec) const
{
    return QStringLiteral("%1|%2|%3|%4")
        .arg(m_model ? QString::fromStdString(m_model->id) : QString(), QString::fromStdString(spec.split.assay))
        .arg(spec.split.heldOut)
        .arg(QString::fromStdString(spec.split.split));
}

void HeldOutPanel::score()
{
    if (!m_model || scoring() || m_assay->count() == 0)
        return;
    const AssayEvalSpec spec = chosenSpec();
    m_scoringKey = key(spec);
    m_score->setEnabled(false);
    m_status->setText(tr("Scoring the held-out sequences of '%1'…").arg(m_assay->currentText()));
    m_watcher->setFuture(QtConcurrent::run(longJobPool(), [spec] { return evaluateOnHeldOut(spec); }));
}

void HeldOutPanel::showResult(const AssayEvalResult& result)
{
    m_table->setRowCount(int(result.figures.size()));
    for (int i = 0; i < int(result.figures.size()); ++i) {
        const HeldOutFigure& f = result.figures[size_t(i)];
        m_table->setItem(i, 0, readOnlyCell(QString::fromStdString(scoreInWords(f.score))));
        m_table->setItem(i, 1, readOnlyCell(QString::fromStdString(f.model)));
        m_table->setItem(i, 2, readOnlyCell(figure(f.spearman)));
        m_table->setItem(i, 3, readOnlyCell(figure(f.pairAccuracy)));
    }
    QString text = tr("%L1 held-out sequences, %L2 pairs of different values.").arg(result.heldOut).arg(result.pairs);
    if (result.selfReferenced)
        text += QLatin1Char(' ') + tr("A pretrained model is its own reference: only its likelihood ranks them.");
    if (!result.note.empty())
        text += QLatin1Char(' ') + tr("No likelihood figures: %1").arg(QString::fromStdString(result.note));
    m_status->setText(text);
}

} // namespace d2dpo::ui
