// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/studyplot.h"

#ifdef D2DPO_STUDY_PLOTS
#include <QApplication>
#include <QFile>

#include <filesystem>
#include <memory>

#include "base/safeoutput.h"
#include "cli/offscreenapp.h"

#define signals Q_SIGNALS
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef foreach
#endif

namespace d2dpo::cli {

#ifdef D2DPO_STUDY_PLOTS
namespace {

/// A palette that stays apart for a dozen lines (Tableau 10, then two darker).
QColor colourOf(size_t i)
{
    static const char* colours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                                    "#ff9da7", "#9c755f", "#bab0ac", "#2f4b7c", "#7a5195", "#003f5c"};
    return QColor(colours[i % (sizeof colours / sizeof *colours)]);
}

} // namespace

Result<std::vector<std::string>> plotStudy(const StudyResults& results, const std::vector<std::string>& metrics,
                                           const std::string& folder, const std::string& xLabel)
{
    const std::unique_ptr<QApplication> app = offscreenApplication();
    std::vector<std::string> written;
    for (const std::string& metric : metrics) {
        const auto found = results.curves.find(metric);
        if (found == results.curves.end())
            continue;
        QCustomPlot plot;
        plot.resize(900, 560);
        plot.legend->setVisible(true);
        plot.legend->setFont(QFont(QStringLiteral("DejaVu Sans"), 8));
        plot.plotLayout()->addElement(1, 0, plot.legend); // below the plot area: it never covers a curve
        plot.legend->setFillOrder(QCPLegend::foColumnsFirst);
        plot.legend->setWrap(5);
        plot.plotLayout()->setRowStretchFactor(1, 0.001);
        plot.xAxis->setLabel(QString::fromStdString(xLabel));
        plot.yAxis->setLabel(QString::fromStdString(metric) + QStringLiteral(" (mean over seeds, band: ±1 sd)"));
        size_t index = 0;
        for (const std::string& setting : results.settingOrder) {
            const auto curve = found->second.find(setting);
            if (curve == found->second.end() || curve->second.steps.empty())
                continue;
            const StudyCurve& c = curve->second;
            QVector<double> x(c.steps.begin(), c.steps.end()), mean(c.mean.begin(), c.mean.end()), low, high;
            for (size_t i = 0; i < c.mean.size(); ++i) {
                low.push_back(c.mean[i] - c.spread[i]);
                high.push_back(c.mean[i] + c.spread[i]);
            }
            const QColor colour = colourOf(index++);
            QColor band = colour;
            band.setAlpha(45);
            QCPGraph* lower = plot.addGraph();
            lower->setData(x, low, true);
            lower->setPen(Qt::NoPen);
            QCPGraph* upper = plot.addGraph();
            upper->setData(x, high, true);
            upper->setPen(Qt::NoPen);
            upper->setBrush(band);
            upper->setChannelFillGraph(lower);
            QCPGraph* line = plot.addGraph();
            line->setData(x, mean, true);
            line->setPen(QPen(colour, 2));
            line->setName(QString::fromStdString(setting));
            plot.legend->removeItem(plot.legend->itemWithPlottable(lower));
            plot.legend->removeItem(plot.legend->itemWithPlottable(upper));
        }
        plot.rescaleAxes();
        plot.xAxis->ticker()->setTickCount(6);
        plot.yAxis->ticker()->setTickCount(6);
        const std::string path = (std::filesystem::path(folder) / (metric + ".png")).string();
        // Saved beside, then moved into place: a figure is whole or absent (base/safeoutput.h).
        const QString temporary = QString::fromStdString(path + ".part.png");
        if (!plot.savePng(temporary, 900, 560))
            return makeError("cannot write '" + path + "'");
        if (std::rename(temporary.toStdString().c_str(), path.c_str()) != 0) {
            QFile::remove(temporary);
            return makeError("cannot write '" + path + "'");
        }
        written.push_back(path);
    }
    return written;
}

#else

Result<std::vector<std::string>> plotStudy(const StudyResults&, const std::vector<std::string>&, const std::string&,
                                           const std::string&)
{
    return makeError("the figures need the desktop build (Qt and QCustomPlot); the CSV files hold every point");
}

#endif

} // namespace d2dpo::cli
