// SPDX-License-Identifier: GPL-3.0-or-later
// The pair view for long sequences: one grid where a position sits in the same column on both
// sides at any width, rows of whole blocks of 10 numbered at their start (each side by its own
// residues once gaps part them), differences counted, gaps from an alignment when the lengths
// differ (remembered), the motif's matches framed, the colour key, short pairs in one row of big
// cells, and the time a pair of length 1000 takes to paint (printed, never asserted).
#include <QCheckBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QScrollBar>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <random>

#include "facades/taskinfo.h"
#include "ui/label/pairgrid/pairgrid.h"
#include "ui/label/pairgrid/pairgridlegend.h"
#include "ui/label/pairpanel.h"
#include "ui/common/symbolcolours.h"

using namespace d2dpo;
using namespace d2dpo::ui;

namespace {

QString randomProtein(int length, unsigned seed)
{
    static const QString residues = QStringLiteral("ACDEFGHIKLMNPQRSTVWY");
    std::mt19937 random(seed);
    QString text;
    for (int i = 0; i < length; ++i)
        text += residues[int(random() % residues.size())];
    return text;
}

} // namespace

class TestPairGrid final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    /// A protein task with a motif rule, read from a FASTA file as a user's would be (tasks stop at
    /// length 512: a longer pair shows as "not a sequence of this task", and the grid still draws it).
    TaskInfo proteinTask(const std::string& rule)
    {
        const QString path = m_dir.filePath(QStringLiteral("p.fasta"));
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly))
            qFatal("cannot write %s", qPrintable(path));
        file.write(">a\nMKVLAGHHTEWWK\n>b\nMKVGHHTEWWK\n");
        file.close();
        SequenceFileOptions options;
        options.vocabulary = "protein";
        options.rule = rule;
        const auto read = readDataFile(path.toStdString(), options);
        if (!read)
            qFatal("%s", read.error().c_str());
        return TaskInfo::fromConfig(read->task).value();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QStandardPaths::setTestModeEnabled(true); // the Align setting stays out of the user's
        QCoreApplication::setOrganizationName(QStringLiteral("d2dpo-studio-tests"));
    }

    void aPositionIsInTheSameColumnOnBothSides_data()
    {
        QTest::addColumn<int>("width");
        for (int width : {420, 700, 1000, 1280, 1900})
            QTest::addRow("%d px", width) << width;
    }

    void aPositionIsInTheSameColumnOnBothSides()
    {
        QFETCH(int, width);
        PairGrid grid;
        grid.setColumns(columnsOf(randomProtein(150, 1), randomProtein(150, 2)), QStringLiteral("protein"));
        grid.setMaxCell(53);
        grid.resize(width, 400);
        const PairGridGeometry g = grid.geometryNow();
        QCOMPARE(g.perRow % 10, 0); // whole blocks of 10
        QVERIFY2(g.perRow >= 10 && g.cell >= 16, qPrintable(QStringLiteral("%1 a row, %2 px").arg(g.perRow).arg(g.cell)));
        QVERIFY(g.left + g.width() <= width);
        for (int column = 0; column < 150; ++column) {
            const QRect left = g.cellRect(PairSide::Left, column);
            const QRect right = g.cellRect(PairSide::Right, column);
            QCOMPARE(left.x(), right.x());
            QVERIFY(right.top() > left.bottom() && right.top() - left.top() < g.bandHeight());
        }
        for (int band = 0; band < g.bands; ++band) {
            const int first = band * g.perRow;
            QCOMPARE(first % 10, 0);
            QCOMPARE(g.cellRect(PairSide::Left, first).x(), g.cellRect(PairSide::Left, 0).x()); // a row's start
            QCOMPARE(grid.rowLabel(PairSide::Left, band), QString::number(first + 1));
            QCOMPARE(grid.rowLabel(PairSide::Right, band), QString::number(first + 1));
        }
    }

    void gapsPartTheRowNumbersOfTheTwoSides()
    {
        // Five gaps open the left row: from the second row on its numbers trail the right's by 5.
        PairGrid grid;
        grid.setColumns(alignedColumnsOf(QStringLiteral("-----") + QString(35, QLatin1Char('A')), QString(40, QLatin1Char('A'))),
                        QStringLiteral("protein"));
        grid.resize(300, 400);
        QCOMPARE(grid.geometryNow().perRow, 10);
        QCOMPARE(grid.rowLabel(PairSide::Left, 0), QStringLiteral("1"));
        QCOMPARE(grid.rowLabel(PairSide::Left, 1), QStringLiteral("6"));
        QCOMPARE(grid.rowLabel(PairSide::Right, 1), QStringLiteral("11"));
        QCOMPARE(grid.columns().gaps, 5);
    }

    void differencesAreCounted()
    {
        const PairColumns same = columnsOf(QStringLiteral("MKVLAGHHTE"), QStringLiteral("MKVIAGHHSE"));
        QCOMPARE(same.differences, 2);
        QVERIFY(same.differs[3] && same.differs[8] && !same.differs[0]);
        QCOMPARE(same.summary(), QStringLiteral("2 differences over 10 positions"));
        const PairColumns shorter = columnsOf(QStringLiteral("MKV"), QStringLiteral("MKVLA"));
        QCOMPARE(shorter.summary(), QStringLiteral("2 differences over 5 positions")); // the missing ones differ
        QCOMPARE(columnsOf(QStringLiteral("MK"), QStringLiteral("MK")).summary(), QStringLiteral("Identical over 2 positions"));
    }

    void alignedModeInsertsGapsWhenLengthsDiffer()
    {
        const TaskInfo task = proteinTask("motif:H.{3}H");
        PairPanel panel;
        panel.setAligned(true);
        panel.showPair(ShownPair{0, "MKVLAGHHTEWWK", "MKVGHHTEWWK", "", "", task.key()}, &task);
        auto* grid = panel.findChild<PairGrid*>(QStringLiteral("pairGrid"));
        QCOMPARE(grid->columns().left, QStringLiteral("MKVLAGHHTEWWK"));
        QCOMPARE(grid->columns().right, QStringLiteral("MKV--GHHTEWWK")); // BLOSUM62: G with G, L and A opposite gaps
        QCOMPARE(grid->columns().differences, 2);
        auto* count = panel.findChild<QLabel*>(QStringLiteral("pairDifferences"));
        QCOMPARE(count->text(), QStringLiteral("2 differences over 13 aligned columns (2 gaps)"));
        QVERIFY(panel.findChild<PairGridLegend*>()->entries().contains(QStringLiteral("gap")));

        // Unticked: column by column, and a new panel remembers it.
        panel.findChild<QCheckBox*>(QStringLiteral("alignCheckBox"))->setChecked(false);
        QCOMPARE(grid->columns().right.trimmed(), QStringLiteral("MKVGHHTEWWK"));
        QCOMPARE(count->text(), QStringLiteral("10 differences over 13 positions"));
        QVERIFY(!PairPanel().aligned());
        panel.setAligned(true);
        QVERIFY(PairPanel().aligned());

        // Equal lengths are never aligned: position i faces position i.
        panel.showPair(ShownPair{0, "MKVLA", "KVLAM", "", "", task.key()}, &task);
        QCOMPARE(grid->columns().right, QStringLiteral("KVLAM"));
        QCOMPARE(grid->columns().differences, 5);
    }

    void motifMatchesAreFramed()
    {
        const TaskInfo task = proteinTask("motif:H.{3}H");
        PairPanel panel;
        panel.showPair(ShownPair{0, "MHAAAHKKKKK", "MKKKKKKKKKK", "", "", task.key()}, &task);
        auto* grid = panel.findChild<PairGrid*>(QStringLiteral("pairGrid"));
        const std::vector<bool> expected{false, true, true, true, true, true, false, false, false, false, false};
        QCOMPARE(grid->columns().leftMotif, expected);
        QCOMPARE(grid->columns().rightMotif, std::vector<bool>(11, false));
        QVERIFY(panel.findChild<PairGridLegend*>()->entries().contains(QStringLiteral("motif H.{3}H")));

        // Drawn: the frame's colour on the top edge of a matched cell, and not on an unmatched one.
        grid->resize(800, 300);
        const QImage image = grid->viewport()->grab().toImage();
        const auto framed = [&](int column) {
            const QRect cell = grid->geometryNow().cellRect(PairSide::Left, column);
            for (int y = cell.top(); y <= cell.top() + 1; ++y)
                if (image.pixelColor(cell.center().x(), y) == PairGrid::motifColour())
                    return true;
            return false;
        };
        QVERIFY(framed(1) && framed(3) && framed(5));
        QVERIFY(!framed(0) && !framed(7));
    }

    void theKeyNamesTheColourClasses()
    {
        PairGridLegend legend;
        legend.setContent(QStringLiteral("protein"), QStringLiteral("H.{3}H"), false);
        const QStringList entries = legend.entries();
        for (const char* name :
             {"hydrophobic", "positive", "negative", "polar", "cysteine", "glycine", "proline", "aromatic"})
            QVERIFY2(entries.filter(QLatin1String(name)).size() == 1, name);
        QVERIFY(entries.contains(QStringLiteral("difference")) && entries.contains(QStringLiteral("motif H.{3}H")));
        legend.setContent(QStringLiteral("dna"), {}, false);
        QCOMPARE(legend.entries(), (QStringList{"A", "C", "G", "T", "difference"}));
        legend.setContent(QStringLiteral("text"), {}, false);
        QCOMPARE(legend.entries(), QStringList{"difference"}); // the letters say it all
        legend.setContent(QStringLiteral("dna"), {}, true, true); // an alignment's gaps, hatched pads
        QCOMPARE(legend.entries(), (QStringList{"A", "C", "G", "T", "difference", "gap", "past the end"}));
    }

    void shortPairsAreOneRowOfBigCells_data()
    {
        QTest::addColumn<QString>("left");
        QTest::addColumn<QString>("right");
        QTest::addColumn<QString>("alphabet");
        QTest::newRow("binary N=16") << "1011001110001011" << "1011001110001010" << "binary";
        QTest::newRow("words") << "cat" << "apple" << "text";
    }

    void shortPairsAreOneRowOfBigCells()
    {
        QFETCH(QString, left);
        QFETCH(QString, right);
        QFETCH(QString, alphabet);
        PairGrid grid;
        grid.setColumns(columnsOf(left, right), alphabet);
        grid.setMaxCell(53); // the Label view's at 1024x640
        grid.resize(980, 300);
        const PairGridGeometry g = grid.geometryNow();
        QCOMPARE(g.bands, 1);
        QCOMPARE(g.cell, 53);
        QCOMPARE(g.cellRect(PairSide::Left, 0).x(), g.cellRect(PairSide::Right, 0).x());
        QVERIFY(grid.sizeHint().height() <= 2 * 53 + 20); // both rows, one above the other, and no more
    }

    void nothingTakesTheFocus()
    {
        PairPanel panel;
        for (QWidget* w : panel.findChildren<QWidget*>())
            QVERIFY2(w->focusPolicy() == Qt::NoFocus || !w->isVisibleTo(&panel) || qobject_cast<QLabel*>(w),
                     qPrintable(w->objectName() + QStringLiteral(" ") + QString::fromLatin1(w->metaObject()->className())));
    }

    void aPairOfLength1000PaintsOnlyWhatIsInView()
    {
        const TaskInfo task = proteinTask("motif:H.{3}H");
        PairPanel panel;
        panel.setAligned(true);
        const std::string left = randomProtein(1000, 3).toStdString();
        std::string right = left;
        right.erase(500, 10); // a deletion: the alignment has work to do
        for (size_t i = 0; i < right.size(); i += 37)
            right[i] = 'W';
        QElapsedTimer clock;
        clock.start();
        panel.showPair(ShownPair{0, left, right, "", "", task.key()}, &task);
        const qint64 align = clock.nsecsElapsed();
        auto* grid = panel.findChild<PairGrid*>(QStringLiteral("pairGrid"));
        QCOMPARE(grid->columns().gaps, 10);
        panel.resize(1000, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(grid->verticalScrollBar()->maximum() > 0); // taller than the window: it scrolls
        constexpr int kPaints = 20;
        clock.restart();
        for (int i = 0; i < kPaints; ++i)
            grid->viewport()->repaint();
        const double perPaint = double(clock.nsecsElapsed()) / kPaints / 1e6;
        // Scrolled to the end, the last band is drawn where it is now seen.
        panel.scrollPages(1000);
        QCOMPARE(grid->verticalScrollBar()->value(), grid->verticalScrollBar()->maximum());
        const QImage end = grid->viewport()->grab().toImage();
        const int last = grid->columns().size() - 1;
        const QRect cell = grid->geometryNow().cellRect(PairSide::Left, last).translated(0, -grid->verticalScrollBar()->value());
        QVERIFY(grid->viewport()->rect().contains(cell));
        QCOMPARE(end.pixelColor(cell.left() + 2, cell.top() + 2),
                 symbolColour(grid->columns().left[last], QStringLiteral("protein")));
        qInfo("length 1000 (%d bands of %d, cells of %d px): aligning and laying out %.1f ms, painting the view %.2f ms",
              grid->geometryNow().bands, grid->geometryNow().perRow, grid->geometryNow().cell, double(align) / 1e6,
              perPaint);
    }
};

QTEST_MAIN(TestPairGrid)
#include "tst_pairgrid.moc"
