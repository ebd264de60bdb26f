// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/measurements/pairspreview.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

#include "ui/common/longjobs.h"
#include "ui/common/measuredpairchoices.h"
#include "ui/common/ownconnection.h"
#include "ui/common/readonlycell.h"

namespace d2dpo::ui {

PairsPreview::PairsPreview(const std::string& storePath, QWidget* parent)
    : QWidget(parent)
    , m_reader(std::make_shared<OwnConnection>(storePath))
    , m_making(new QFutureWatcher<Result<AssayPairsResult>>(this))
{
    connect(m_making, &QFutureWatcherBase::finished, this, [this] {
        const Result<AssayPairsResult> made = m_making->result();
        if (std::exchange(m_again, false)) {
            update();
            return;
        }
        showMade(made);
    });
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Pairs:"), this));
    m_strategy = makePairStrategyChoice(this);
    row->addWidget(m_strategy);
    row->addWidget(new QLabel(tr("at most:"), this));
    m_budget = new QSpinBox(this);
    m_budget->setRange(1, 100'000'000);
    m_budget->setValue(20000);
    m_budget->setGroupSeparatorShown(true);
    row->addWidget(m_budget);
    row->addStretch(1);
    layout->addLayout(row);
    // The held-out choice on a row of its own: in one row the view did not fit a 1024 px screen.
    auto* heldOutRow = new QHBoxLayout;
    heldOutRow->addWidget(new QLabel(tr("Held out:"), this));
    const HeldOutChoice heldOut = makeHeldOutChoice(this);
    m_heldOut = heldOut.share;
    m_split = heldOut.split;
    heldOutRow->addWidget(m_heldOut);
    heldOutRow->addWidget(m_split);
    heldOutRow->addStretch(1);
    layout->addLayout(heldOutRow);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("pairsSummary"));
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);
    m_table = new QTableWidget(0, 4, this);
    m_table->setHorizontalHeaderLabels({tr("Better"), tr("Its value"), tr("Worse"), tr("Its value")});
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::TypeWriter);
    m_table->setFont(mono);
    layout->addWidget(m_table, 1);
    connect(m_strategy, &QComboBox::currentIndexChanged, this, &PairsPreview::update);
    connect(m_split, &QComboBox::currentIndexChanged, this, &PairsPreview::update);
    connect(m_heldOut, &QDoubleSpinBox::valueChanged, this, &PairsPreview::update);
    connect(m_budget, &QSpinBox::valueChanged, this, &PairsPreview::update);
}

void PairsPreview::showAssay(const QString& assay)
{
    m_assay = assay;
    update();
}

void PairsPreview::setStrategy(const QString& name)
{
    const int index = m_strategy->findData(name);
    if (index >= 0)
        m_strategy->setCurrentIndex(index);
}

QString PairsPreview::summary() const { return m_summary->text(); }

void PairsPreview::update()
{
    if (m_making->isRunning()) {
        m_again = true;
        return;
    }
    m_pairs = 0;
    if (m_assay.isEmpty()) {
        m_table->setRowCount(0);
        m_summary->setText(tr("Choose an assay to see the pairs its values make."));
        Q_EMIT shown();
        return;
    }
    AssayPairsSpec spec;
    spec.assay = m_assay.toStdString();
    spec.strategy = m_strategy->currentData().toString().toStdString();
    spec.heldOut = m_heldOut->value();
    spec.split = m_split->currentData().toString().toStdString();
    spec.budget = m_budget->value();
    m_summary->setText(tr("Making the pairs…"));
    m_making->setFuture(QtConcurrent::run(storeReadPool(), [reader = m_reader, spec]() -> Result<AssayPairsResult> {
        auto store = reader->get();
        if (!store)
            return makeError(store.error());
        return assayPairs(*store.value(), spec);
    }));
}

void PairsPreview::showMade(const Result<AssayPairsResult>& made)
{
    m_table->setRowCount(0);
    if (!made) {
        m_summary->setText(QString::fromStdString(made.error()));
        Q_EMIT shown();
        return;
    }
    const MeasuredPairSet& pairs = made->pairs;
    m_pairs = int(pairs.pairs.size());
    m_summary->setText(tr("%L1 pairs from %L2 of %L3 sequences (%4). The Train view makes the same pairs "
                          "with the same choices.")
                           .arg(qint64(pairs.pairs.size()))
                           .arg(qint64(pairs.sequencesUsed))
                           .arg(qint64(made->sequences.size()))
                           .arg(QString::fromStdString(pairs.description)));
    const int listed = std::min<int>(kShown, m_pairs);
    m_table->setRowCount(listed);
    const auto value = [](const MeasuredSequence& s) {
        return s.count > 1 || s.spread > 0 ? QStringLiteral("%1 ± %2").arg(s.mean, 0, 'g', 4).arg(s.spread, 0, 'g', 2)
                                           : QString::number(s.mean, 'g', 4);
    };
    for (int i = 0; i < listed; ++i) {
        const MeasuredSequence& w = made->sequences[pairs.pairs[size_t(i)].winner];
        const MeasuredSequence& l = made->sequences[pairs.pairs[size_t(i)].loser];
        m_table->setItem(i, 0, readOnlyCell(QString::fromStdString(w.sequence)));
        m_table->setItem(i, 1, readOnlyCell(value(w)));
        m_table->setItem(i, 2, readOnlyCell(QString::fromStdString(l.sequence)));
        m_table->setItem(i, 3, readOnlyCell(value(l)));
    }
    Q_EMIT shown();
}

} // namespace d2dpo::ui
