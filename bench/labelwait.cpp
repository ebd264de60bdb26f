// SPDX-License-Identifier: GPL-3.0-or-later
// Benchmark (not a test): how long an expert waits for the next pair in the Label view. A
// simulated expert on an empty store decides each pair in DECIDE seconds while the view draws its
// pairs in the background from CHECKPOINT (any model: an imported protein model is the case that
// matters); the wait is from a choice to the next pair on screen (the first pair's, which includes
// loading the model, is shown apart). The view is run twice in one process, on stores of their
// own: pairs handed over in pieces as they are drawn (the supply today), then all of a request at
// its end (as before), so the ratio compares the two on the same machine.
//
//   d2dpo-label-wait-bench CHECKPOINT [--pairs 30] [--decide 3]
// Runs offscreen unless a display is set; prints Markdown.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

#include "base/hostmemory.h"
#include "facades/runtimeinfo.h"
#include "store/preferencestore.h"
#include "ui/label/labelview.h"
#include "ui/label/pairsupply.h"

namespace {

struct Waits {
    double first = 0; ///< seconds to the first pair (the model loaded, the first pairs drawn)
    std::vector<double> after; ///< seconds from each choice to the next pair on screen
};

double quantile(std::vector<double> v, double q)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[size_t(q * double(v.size() - 1))];
}

/// One simulated session: `pairs` choices, each `decideSeconds` after its pair appeared.
Waits measure(const QString& checkpoint, int pairs, double decideSeconds, bool inPieces)
{
    QTemporaryDir dir;
    auto store = d2dpo::PreferenceStore::open(dir.filePath(QStringLiteral("bench.sqlite")).toStdString());
    if (!store) {
        std::fprintf(stderr, "d2dpo-label-wait-bench: %s\n", store.error().c_str());
        std::exit(1);
    }
    d2dpo::ui::LabelView view(*store.value());
    view.setLabeler(QStringLiteral("bench"));
    view.supply().setDeliverInPieces(inPieces);
    view.resize(1024, 600);
    view.show();
    Waits waits;
    QElapsedTimer clock;
    clock.start();
    view.generateFrom(checkpoint, 50);
    qint64 lastId = -1;
    double choseAt = 0;
    int chosen = 0;
    QEventLoop loop;
    QTimer poll;
    poll.setInterval(5);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        const auto pair = view.currentPair();
        if (!pair || pair->id == lastId)
            return;
        const double now = clock.nsecsElapsed() / 1e9;
        if (chosen == 0)
            waits.first = now;
        else
            waits.after.push_back(now - choseAt);
        lastId = pair->id;
        poll.stop();
        QTimer::singleShot(int(decideSeconds * 1000), &loop, [&] {
            const int before = view.sessionCount();
            view.chooseLeft();
            if (view.sessionCount() == before) { // not painted yet: press again shortly
                lastId = -1;
                poll.start();
                return;
            }
            choseAt = clock.nsecsElapsed() / 1e9;
            if (++chosen == pairs)
                loop.quit();
            else
                poll.start();
        });
    });
    poll.start();
    loop.exec();
    view.supply().waitForIdle();
    return waits;
}

void row(const char* how, const Waits& w)
{
    const auto over = [&](double s) {
        return std::count_if(w.after.begin(), w.after.end(), [s](double x) { return x > s; });
    };
    std::printf("| %s | %.1f s | %.3f s | %.3f s | %.2f s | %.1f s | %ld | %ld |\n", how, w.first, quantile(w.after, 0.5),
                quantile(w.after, 0.9), w.after.empty() ? 0.0 : *std::max_element(w.after.begin(), w.after.end()),
                std::accumulate(w.after.begin(), w.after.end(), 0.0), long(over(0.1)), long(over(1.0)));
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
        qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    d2dpo::keepFreedHostMemory(); // as d2dpo-studio does
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("d2dpo-studio-bench")); // leaves the user's settings alone
    QApplication::setApplicationName(QStringLiteral("d2dpo-label-wait-bench"));
    QCommandLineParser parser;
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("checkpoint"), QStringLiteral("The model to draw pairs from."));
    const QCommandLineOption pairsOption(QStringLiteral("pairs"), QStringLiteral("Choices per session (default 30)."),
                                         QStringLiteral("n"), QStringLiteral("30"));
    const QCommandLineOption decideOption(QStringLiteral("decide"),
                                          QStringLiteral("Seconds the expert takes per pair (default 3)."),
                                          QStringLiteral("s"), QStringLiteral("3"));
    parser.addOptions({pairsOption, decideOption});
    parser.process(app);
    if (parser.positionalArguments().size() != 1)
        parser.showHelp(2);
    const QString checkpoint = parser.positionalArguments().front();
    bool pairsOk = false, decideOk = false;
    const int pairs = parser.value(pairsOption).toInt(&pairsOk);
    const double decide = parser.value(decideOption).toDouble(&decideOk);
    if (!pairsOk || pairs < 2 || pairs > 1000 || !decideOk || !(decide >= 0 && decide <= 600)) {
        std::fprintf(stderr, "d2dpo-label-wait-bench: --pairs must be 2..1000 and --decide 0..600 seconds\n");
        return 2;
    }

    std::printf("%s\n\n%s: %d choices, %.1f s to decide each\n\n", d2dpo::describeAutoRuntime().c_str(),
                qPrintable(checkpoint), pairs, decide);
    std::printf(
        "| pairs handed over | first pair | wait median | p90 | longest | total waited | waits > 0.1 s | > 1 s |\n"
        "|---|---|---|---|---|---|---|---|\n");
    const Waits pieces = measure(checkpoint, pairs, decide, true);
    row("in pieces as drawn", pieces);
    const Waits whole = measure(checkpoint, pairs, decide, false);
    row("a request at its end (before)", whole);
    return 0;
}
