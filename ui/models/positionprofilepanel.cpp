// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/positionprofilepanel.h"

#include <QCoreApplication>
#include <QWheelEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>

#include <algorithm>

#include "analysis/alignment.h"
#include "facades/taskinfo.h"
#include "ui/common/qcustomplotinclude.h"
#include "ui/common/sequencelogo.h"

namespace d2dpo::ui {

namespace {

// One colour per set, in every figure: the data grey-blue, the reference grey and the model
// orange as in the Models view's histogram.
const QColor TrainingColour(0x6b, 0x8e, 0xb8);
const QColor ReferenceColour(160, 160, 160);
const QColor ModelColour(255, 127, 14);

/// Wide columns for short sequences; at 1000 positions 8 px (the scroll area pans).
int columnWidthFor(int64_t length) { return length <= 60 ? 20 : length <= 200 ? 12 : 8; }

/// The wheel over a plot scrolls the page, as everywhere else (Ctrl+wheel zooms the positions);
/// a double-click shows the whole range again.
class PlotWheel final : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::MouseButtonDblClick) {
            auto* plot = static_cast<QCustomPlot*>(watched);
            const QVariant full = plot->property("fullRange");
            if (full.isValid())
                plot->xAxis->setRange(full.toPointF().x(), full.toPointF().y());
            plot->replot();
            return true;
        }
        if (event->type() != QEvent::Wheel || (static_cast<QWheelEvent*>(event)->modifiers() & Qt::ControlModifier))
            return false;
        for (QWidget* w = static_cast<QWidget*>(watched)->parentWidget(); w; w = w->parentWidget())
            if (auto* area = qobject_cast<QScrollArea*>(w)) {
                QCoreApplication::sendEvent(area->verticalScrollBar(), event);
                return true;
            }
        return true; // no page to scroll: the plot keeps its range
    }
};

/// The positions a plot shows as drawn, which a double-click comes back to.
void setFullRange(QCustomPlot* plot, double lower, double upper)
{
    plot->xAxis->setRange(lower, upper);
    plot->setProperty("fullRange", QPointF(lower, upper));
}

QCustomPlot* makePlot(QWidget* parent, const QString& yLabel)
{
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumHeight(200);
    plot->yAxis->setLabel(yLabel);
    plot->legend->setVisible(true);
    plot->legend->setFont(QFont(parent->font().family(), 8));
    plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->axisRect()->setRangeZoom(Qt::Horizontal);
    plot->axisRect()->setRangeDrag(Qt::Horizontal);
    plot->installEventFilter(new PlotWheel(plot));
    plot->setToolTip(QCoreApplication::translate("PositionProfilePanel",
                                                 "Drag to pan, Ctrl+wheel to zoom, double-click for the whole range"));
    return plot;
}

QCPBars* addBars(QCustomPlot* plot, QCPBarsGroup* group, const QString& name, const QColor& colour, double width)
{
    auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
    bars->setName(name);
    bars->setPen(QPen(colour.darker(130)));
    bars->setBrush(colour);
    bars->setWidth(width);
    bars->setBarsGroup(group);
    return bars;
}

/// Removes the bars and their groups (a group outlives clearPlottables(); one per redraw would pile up).
void clearBars(QCustomPlot* plot)
{
    plot->clearPlottables();
    qDeleteAll(plot->findChildren<QCPBarsGroup*>(QString(), Qt::FindDirectChildrenOnly));
}

QString percent(double share) { return QString::number(100.0 * share, 'f', 1) + QLatin1Char('%'); }

} // namespace

PositionProfileInputs PositionProfileInputs::fromTask(const TaskInfo& task)
{
    PositionProfileInputs inputs;
    inputs.symbols = task.symbols();
    inputs.alphabet = QString::fromStdString(task.alphabet());
    inputs.training = task.trainingTexts();
    inputs.length = task.config().length;
    return inputs;
}

PositionProfilePanel::PositionProfilePanel(QWidget* parent) : QWidget(parent)
{
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_export = new QPushButton(tr("Export…"), this);
    m_export->setToolTip(tr("Write the logos as PNG and SVG and the figures as CSV into a folder"));
    m_export->setEnabled(false);
    connect(m_export, &QPushButton::clicked, this, &PositionProfilePanel::exportFromDialog);
    auto* header = new QHBoxLayout;
    header->addWidget(m_summary, 1);
    header->addWidget(m_export);

    // Both logos in one scrolled widget: one scroll bar pans them together, position under position.
    auto* logos = new QWidget;
    auto* logoLayout = new QVBoxLayout(logos);
    logoLayout->setContentsMargins(0, 0, 0, 0);
    logoLayout->setSpacing(2);
    m_referenceLogo = new SequenceLogo(logos);
    m_modelLogo = new SequenceLogo(logos);
    logoLayout->addWidget(m_referenceLogo);
    logoLayout->addWidget(m_modelLogo);
    logoLayout->addStretch(1);
    m_logoScroll = new QScrollArea(this);
    m_logoScroll->setWidget(logos);
    m_logoScroll->setWidgetResizable(false);
    m_logoScroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_logoScroll->setFixedHeight(m_modelLogo->sizeHint().height() + 24);

    m_composition = makePlot(this, tr("share of all positions"));
    m_identityPlot = makePlot(this, tr("share of samples"));
    m_identityPlot->xAxis->setLabel(tr("identity to the nearest training sequence"));
    m_identity = new QLabel(this);
    m_identity->setWordWrap(true);
    m_identity->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* identityColumn = new QVBoxLayout;
    identityColumn->addWidget(m_identityPlot, 1);
    identityColumn->addWidget(m_identity);
    auto* figures = new QHBoxLayout;
    figures->addWidget(m_composition, 1);
    figures->addLayout(identityColumn, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addWidget(m_logoScroll);
    layout->addLayout(figures, 1);
    clear();
}

void PositionProfilePanel::clear()
{
    m_training = {};
    m_reference = {};
    m_model = {};
    m_summary->setText(tr("No samples to profile."));
    m_referenceLogo->setProfile({}, QStringLiteral("text"));
    m_modelLogo->setProfile({}, QStringLiteral("text"));
    m_referenceLogo->hide();
    clearBars(m_composition);
    m_composition->replot();
    clearBars(m_identityPlot);
    m_identityPlot->replot();
    m_identity->clear();
    m_export->setEnabled(false);
}

PositionProfiles PositionProfilePanel::profile(const PositionProfileInputs& inputs)
{
    // One length for every set, so the logos share their x positions.
    PositionProfiles out;
    out.length = inputs.length;
    for (const auto* set : {&inputs.samples, &inputs.referenceSamples, &inputs.training})
        for (const std::string& s : *set)
            out.length = std::max<int64_t>(out.length, int64_t(withoutTrailingPads(s).size()));
    out.training = profileSet("training", inputs.training, inputs.symbols, {}, out.length);
    out.reference = profileSet("reference", inputs.referenceSamples, inputs.symbols, inputs.training, out.length);
    out.model = profileSet("model", inputs.samples, inputs.symbols, inputs.training, out.length);
    return out;
}

void PositionProfilePanel::setInputs(const PositionProfileInputs& inputs) { showProfiles(profile(inputs), inputs); }

void PositionProfilePanel::showProfiles(PositionProfiles profiles, const PositionProfileInputs& inputs)
{
    const int64_t length = profiles.length;
    m_alphabet = inputs.alphabet;
    m_training = std::move(profiles.training);
    m_reference = std::move(profiles.reference);
    m_model = std::move(profiles.model);

    const int column = columnWidthFor(length);
    const double maxBits = m_model.profile.maxBits();
    const auto showLogo = [&](SequenceLogo* logo, const ProfiledSet& set, const QString& name) {
        logo->setColumnWidth(column);
        logo->setMaxBits(maxBits);
        logo->setProfile(set.profile, m_alphabet, tr("%1: %2 samples").arg(name).arg(set.sequences.size()));
    };
    showLogo(m_modelLogo, m_model, inputs.modelName);
    showLogo(m_referenceLogo, m_reference, inputs.referenceName);
    m_referenceLogo->setVisible(hasReference());
    m_logoScroll->widget()->adjustSize();
    // Both logos whole, never a vertical scroll bar: only the positions pan.
    const int scrollBar = m_logoScroll->horizontalScrollBar()->sizeHint().height();
    m_logoScroll->setFixedHeight(m_logoScroll->widget()->sizeHint().height() + scrollBar +
                                 2 * m_logoScroll->frameWidth());

    m_summary->setText(tr("%1 positions, %2 symbols. Letters are stacked by frequency and are as tall as the "
                          "position's information (log2 %2 = %3 bits at most, corrected for the sample size as "
                          "WebLogo does); the strip beneath is the entropy (dark: conserved). %4 training sequences.")
                           .arg(length)
                           .arg(inputs.symbols.size())
                           .arg(maxBits, 0, 'f', 2)
                           .arg(inputs.training.size()));
    drawComposition();
    drawIdentity();
    m_export->setEnabled(!m_model.sequences.empty());
}

std::vector<const ProfiledSet*> PositionProfilePanel::shownSets() const
{
    std::vector<const ProfiledSet*> sets;
    if (!m_training.sequences.empty())
        sets.push_back(&m_training);
    if (hasReference())
        sets.push_back(&m_reference);
    sets.push_back(&m_model);
    return sets;
}

void PositionProfilePanel::drawComposition()
{
    clearBars(m_composition);
    auto* group = new QCPBarsGroup(m_composition);
    const std::string& symbols = m_model.profile.symbols;
    const auto sets = shownSets();
    const double width = 0.8 / double(sets.size());
    double top = 0.05;
    for (const ProfiledSet* set : sets) {
        const QColor colour = set == &m_training ? TrainingColour : set == &m_reference ? ReferenceColour : ModelColour;
        QCPBars* bars = addBars(m_composition, group, QString::fromStdString(set->name), colour, width);
        const std::vector<double> shares = set->profile.composition();
        QVector<double> keys, values;
        for (size_t k = 0; k < shares.size(); ++k) {
            keys << double(k);
            values << shares[k];
            top = std::max(top, shares[k]);
        }
        bars->setData(keys, values, true);
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (size_t k = 0; k < symbols.size(); ++k)
        ticker->addTick(double(k), QString(QChar::fromLatin1(symbols[k])));
    m_composition->xAxis->setTicker(ticker);
    m_composition->xAxis->setLabel(tr("symbol"));
    setFullRange(m_composition, -0.6, double(std::max<size_t>(symbols.size(), 1)) - 0.4);
    m_composition->yAxis->setRange(0, top * 1.3); // headroom so the legend covers no bar
    m_composition->replot();
}

void PositionProfilePanel::drawIdentity()
{
    clearBars(m_identityPlot);
    m_identity->setText(identityText());
    if (m_training.sequences.empty())
        return;
    auto* group = new QCPBarsGroup(m_identityPlot);
    double top = 0.05;
    for (const ProfiledSet* set : {&m_reference, &m_model}) {
        const NearestIdentity& n = set->nearest;
        if (set->sequences.empty() || n.histogram.empty())
            continue;
        const double binWidth = 1.0 / double(n.histogram.size());
        QCPBars* bars = addBars(m_identityPlot, group, QString::fromStdString(set->name),
                                set == &m_reference ? ReferenceColour : ModelColour, binWidth * 0.4);
        QVector<double> keys, values;
        for (size_t b = 0; b < n.histogram.size(); ++b) {
            keys << (double(b) + 0.5) * binWidth;
            values << double(n.histogram[b]) / double(set->sequences.size());
            top = std::max(top, values.back());
        }
        bars->setData(keys, values, true);
    }
    setFullRange(m_identityPlot, 0, 1);
    m_identityPlot->yAxis->setRange(0, top * 1.3);
    m_identityPlot->replot();
}

QString PositionProfilePanel::identityText() const
{
    if (m_training.sequences.empty())
        return tr("No training sequences to compare with (a model imported without its data).");
    QStringList lines;
    for (const ProfiledSet* set : {&m_model, &m_reference}) {
        if (set->sequences.empty())
            continue;
        const NearestIdentity& n = set->nearest;
        const double copies = double(n.copies) / double(set->sequences.size());
        lines << tr("%1: mean %2, median %3; copies of a training sequence: %4 (%5)")
                     .arg(QString::fromStdString(set->name))
                     .arg(n.mean, 0, 'f', 3)
                     .arg(n.median, 0, 'f', 3)
                     .arg(n.copies)
                     .arg(percent(copies));
    }
    return tr("Identity to the nearest training sequence (equal positions over the longer, no alignment):\n") +
           lines.join(QLatin1Char('\n'));
}

} // namespace d2dpo::ui
