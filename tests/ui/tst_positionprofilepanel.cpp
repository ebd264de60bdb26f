// SPDX-License-Identifier: GPL-3.0-or-later
// The per-position panel (ui/models/positionprofilepanel.h, ui/common/sequencelogo.h): a constant column's logo
// is one letter of the full height the information allows, drawn in its colour; the export
// writes a PNG of the logos, an SVG that parses, and CSVs whose numbers are the profile's; the
// task's part of the inputs comes from TaskInfo.
#include <QImage>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QWheelEvent>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest/QtTest>

#include <cmath>
#include <random>

#include "facades/taskinfo.h"
#include "ui/models/positionprofilepanel.h"
#include "ui/common/qcustomplotinclude.h"
#include "ui/common/sequencelogo.h"

using namespace d2dpo;
using namespace d2dpo::ui;

namespace {

const std::string Residues = "ACDEFGHIKLMNPQRSTVWYX";

std::string randomProtein(std::mt19937& random, int length)
{
    std::string text;
    for (int i = 0; i < length; ++i)
        text += Residues[random() % Residues.size()];
    return text;
}

/// Inputs whose first position is always K (and the reference's always A), 30 positions long.
PositionProfileInputs inputs()
{
    std::mt19937 random(1);
    PositionProfileInputs in;
    in.symbols = Residues;
    in.alphabet = QStringLiteral("protein");
    for (int i = 0; i < 500; ++i)
        in.samples.push_back(std::string(1, 'K').append(randomProtein(random, 29)));
    for (int i = 0; i < 300; ++i)
        in.referenceSamples.push_back(
            std::string(1, 'A').append(randomProtein(random, 24 + int(random() % 6))).append("...."));
    for (int i = 0; i < 40; ++i)
        in.training.push_back(std::string(1, 'K').append(randomProtein(random, 29)));
    in.samples[3] = in.training[5]; // one copy of the data
    return in;
}

QStringList csvLines(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace

class TestPositionProfilePanel final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void constantColumnIsOneFullLetter()
    {
        PositionProfilePanel panel;
        panel.setInputs(inputs());
        const SequenceLogo* logo = panel.modelLogo();
        const auto glyphs = logo->glyphsAt(0);
        QCOMPARE(glyphs.size(), 1);
        QCOMPARE(glyphs.front().symbol, QLatin1Char('K'));
        const QRectF stack = logo->stackArea();
        const PositionProfile& profile = panel.modelSet().profile;
        // The full height the information allows: log2 21 less the small-sample correction of 500.
        const double expected = profile.information[0] / profile.maxBits() * stack.height();
        QVERIFY(std::abs(profile.information[0] - (std::log2(21.0) - smallSampleCorrection(21, 500))) < 1e-12);
        QVERIFY(std::abs(glyphs.front().rect.height() - expected) < 1e-9);
        QVERIFY(glyphs.front().rect.height() > 0.99 * stack.height());
        QCOMPARE(glyphs.front().rect.bottom(), stack.bottom());
        // Drawn: a good part of the letter's box is ink, not the white background.
        QImage drawn(logo->sizeHint(), QImage::Format_ARGB32);
        {
            QPainter painter(&drawn);
            logo->render(painter);
        }
        const QRect box = glyphs.front().rect.toAlignedRect() & drawn.rect();
        int ink = 0;
        for (int y = box.top(); y <= box.bottom(); ++y)
            for (int x = box.left(); x <= box.right(); ++x)
                ink += drawn.pixelColor(x, y) != QColor(Qt::white) ? 1 : 0;
        QVERIFY2(ink > box.width() * box.height() / 5, qPrintable(QString::number(ink)));
        // A random column stacks several short letters under the same scale.
        QVERIFY(logo->glyphsAt(10).size() <= 21);
        // The two logos share their x positions.
        QCOMPARE(panel.referenceLogo()->columnX(7), logo->columnX(7));
        QCOMPARE(panel.referenceLogo()->profile().length(), profile.length());
    }

    void exportWritesFigures()
    {
        PositionProfilePanel panel;
        panel.setInputs(inputs());
        QTemporaryDir folder;
        QVERIFY(folder.isValid());
        const Status written = panel.exportTo(folder.path());
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());

        const QImage png(folder.filePath(QStringLiteral("logos.png")));
        QVERIFY(!png.isNull());
        QCOMPARE(png.height(), panel.modelLogo()->sizeHint().height() + panel.referenceLogo()->sizeHint().height());

        QFile svgFile(folder.filePath(QStringLiteral("logos.svg")));
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QByteArray svg = svgFile.readAll();
        QXmlStreamReader xml(svg);
        int elements = 0;
        while (!xml.atEnd())
            elements += xml.readNext() == QXmlStreamReader::StartElement ? 1 : 0;
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(elements > 50);
        QVERIFY(QSvgRenderer(svg).isValid());

        // positions.csv: the model's position 1 is all K, with the profile's numbers.
        const QStringList positions = csvLines(folder.filePath(QStringLiteral("positions.csv")));
        const QStringList header = positions.front().split(QLatin1Char(','));
        QCOMPARE(header.size(), 4 + 21 + 2);
        const int k = int(header.indexOf(QStringLiteral("K")));
        QVERIFY(k > 0);
        const PositionProfile& model = panel.modelSet().profile;
        QCOMPARE(positions.size(), 1 + 3 * int(model.length())); // training, reference, model
        int modelRows = 0;
        for (const QString& line : positions) {
            const QStringList cells = line.split(QLatin1Char(','));
            if (cells.front() != QLatin1String("model"))
                continue;
            const int p = cells[1].toInt() - 1;
            QCOMPARE(cells[2].toLongLong(), model.sequences);
            QVERIFY(std::abs(cells[k].toDouble() - model.frequency(p, Residues.find('K'))) < 1e-6);
            QVERIFY(std::abs(cells[cells.size() - 2].toDouble() - model.entropy[size_t(p)]) < 1e-6);
            QVERIFY(std::abs(cells.back().toDouble() - model.information[size_t(p)]) < 1e-6);
            ++modelRows;
        }
        QCOMPARE(modelRows, int(model.length()));

        // composition.csv: one row per symbol, one column per set.
        const QStringList composition = csvLines(folder.filePath(QStringLiteral("composition.csv")));
        QCOMPARE(composition.front(), QStringLiteral("symbol,training,reference,model"));
        QCOMPARE(composition.size(), 1 + 21);
        const std::vector<double> shares = model.composition();
        for (int s = 0; s < 21; ++s) {
            const QStringList cells = composition[s + 1].split(QLatin1Char(','));
            QCOMPARE(cells.front(), QString(QChar::fromLatin1(Residues[size_t(s)])));
            QVERIFY(std::abs(cells.back().toDouble() - shares[size_t(s)]) < 1e-6);
        }

        // nearest.csv: a row per sample of the reference and the model, identities as computed.
        const QStringList nearest = csvLines(folder.filePath(QStringLiteral("nearest.csv")));
        QCOMPARE(nearest.size(), 1 + 300 + 500);
        const NearestIdentity& n = panel.modelSet().nearest;
        const QStringList copy = nearest[300 + 4].split(QLatin1Char(','));
        QCOMPARE(copy[0], QStringLiteral("model"));
        QCOMPARE(copy[3].toDouble(), 1.0);
        QCOMPARE(copy[4].toInt(), 6); // training sequence 6, 1-based
        QCOMPARE(n.copies, int64_t(1));
        QVERIFY(std::abs(nearest.last().split(QLatin1Char(','))[3].toDouble() - n.identity.back()) < 1e-6);
        QVERIFY(panel.identityText().contains(QStringLiteral("model: mean")));
    }

    void theWheelScrollsThePageAndCtrlWheelZooms()
    {
        // The panel in a page shorter than itself, as the Models view shows it.
        QScrollArea page;
        page.resize(700, 300);
        auto* panel = new PositionProfilePanel;
        page.setWidget(panel);
        page.setWidgetResizable(true);
        panel->setInputs(inputs());
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QScrollBar* bar = page.verticalScrollBar();
        QVERIFY(bar->maximum() > 0);
        const QList<QCustomPlot*> plots = panel->findChildren<QCustomPlot*>();
        QVERIFY(!plots.isEmpty());
        QCustomPlot* plot = plots.front();
        const QCPRange drawn = plot->xAxis->range();
        const QPointF middle(plot->width() / 2.0, plot->height() / 2.0);
        const auto wheel = [&](Qt::KeyboardModifiers modifiers) {
            QWheelEvent event(middle, plot->mapToGlobal(middle), QPoint(), QPoint(0, -120), Qt::NoButton, modifiers,
                              Qt::NoScrollPhase, false);
            QCoreApplication::sendEvent(plot, &event);
        };
        wheel(Qt::NoModifier); // the page moves, the plot's range does not
        QVERIFY(bar->value() > 0);
        QCOMPARE(plot->xAxis->range(), drawn);
        wheel(Qt::ControlModifier); // Ctrl: the positions zoom
        QVERIFY(plot->xAxis->range() != drawn);
        QMouseEvent doubleClick(QEvent::MouseButtonDblClick, middle, plot->mapToGlobal(middle), Qt::LeftButton,
                                Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(plot, &doubleClick); // back to the whole range
        QCOMPARE(plot->xAxis->range(), drawn);
    }

    void nothingToExportWithoutSamples()
    {
        PositionProfilePanel panel;
        QTemporaryDir folder;
        QVERIFY(!panel.exportTo(folder.path()).ok());
        PositionProfileInputs in = inputs();
        in.referenceSamples.clear();
        panel.setInputs(in);
        QVERIFY(panel.referenceLogo()->isHidden());
        QVERIFY(panel.exportTo(folder.path()).ok());
        QCOMPARE(QImage(folder.filePath(QStringLiteral("logos.png"))).height(), panel.modelLogo()->sizeHint().height());
    }

    void inputsFromTheTask()
    {
        TaskConfig config;
        config.name = "sequences";
        config.symbols = "ACGT";
        config.padded = true;
        config.length = 6;
        config.minLength = 4;
        config.data = {"ACGTAC", "ACGT", "GGGGA"};
        auto task = TaskInfo::fromConfig(config);
        QVERIFY2(task.ok(), task.ok() ? "" : task.error().c_str());
        const PositionProfileInputs in = PositionProfileInputs::fromTask(task.value());
        QCOMPARE(in.symbols, std::string("ACGT"));
        QCOMPARE(in.alphabet, QStringLiteral("dna"));
        QCOMPARE(in.training, config.data);
        QCOMPARE(in.length, 6);

        // The paper's task generates its data: draws of b_i.
        auto binary = TaskInfo::fromConfig(TaskConfig{});
        QVERIFY(binary.ok());
        const PositionProfileInputs bits = PositionProfileInputs::fromTask(binary.value());
        QCOMPARE(bits.symbols, std::string("01"));
        QCOMPARE(bits.training.size(), size_t(1000));
    }
};

QTEST_MAIN(TestPositionProfilePanel)
#include "tst_positionprofilepanel.moc"
