// SPDX-License-Identifier: GPL-3.0-or-later
// Benchmark (not a test): how long the GUI thread can stall while D2-DPO trains in the worker.
// Opens the real main window on a scratch store holding the shipped reference model (N = 10),
// starts a run from the Train view on rule-made pairs with the view's default settings, and
// ticks a 1 ms precise timer in the GUI thread, recording every gap between ticks. The same
// timer is measured first with the window idle: that is the baseline of this machine.
// With --two-jobs it runs two long jobs at once instead (the Models view drawing 100000 samples
// of the model, the Label view generating 500 pairs of it) for 15 s, then presses the Models
// view's Cancel and times how long the draw takes to end; --model adds a checkpoint of your own
// (an imported 8M protein model) and uses it in place of the shipped one.
//
//   d2dpo-gui-stall-bench [--steps N] [--screenshot dashboard.png] [--two-jobs [--model M.d2dpo]]
// Runs offscreen unless a display is set; prints the figures and exits.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QProgressBar>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "ui/shell/firstrun.h"
#include "base/hostmemory.h"
#include "ui/shell/mainwindow.h"
#include "ui/label/labelview.h"
#include "ui/common/metricplot.h"
#include "ui/models/modelmeasurer.h"
#include "ui/models/modelsview.h"
#include "ui/label/pairsupply.h"
#include "jobs/pairgenerator.h"
#include "store/preferencestore.h"
#include "facades/runtimeinfo.h"
#include "ui/train/trainsettingsform.h"
#include "ui/train/trainview.h"
#include "ui/train/trainworker.h"

namespace {

/// Gaps between ticks of a 1 ms timer, in milliseconds.
class StallMeter {
public:
    StallMeter()
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            const double now = m_clock.nsecsElapsed() / 1e6;
            m_gaps.push_back(now - m_last);
            m_last = now;
        });
    }
    void start()
    {
        m_gaps.clear();
        m_clock.start();
        m_last = 0;
        m_timer.start();
    }
    void stop() { m_timer.stop(); }
    void print(const char* label) const
    {
        std::vector<double> sorted = m_gaps;
        std::sort(sorted.begin(), sorted.end());
        const auto quantile = [&](double q) { return sorted.empty() ? 0.0 : sorted[size_t(q * double(sorted.size() - 1))]; };
        const auto over = [&](double ms) { return std::count_if(sorted.begin(), sorted.end(), [ms](double g) { return g > ms; }); };
        std::printf("%-9s %7zu ticks in %6.1f s   median %5.2f ms   p99 %6.2f ms   p99.9 %6.2f ms   longest %6.2f ms   "
                    "gaps > 16 ms: %ld, > 20 ms: %ld\n",
                    label, sorted.size(), m_clock.elapsed() / 1000.0, quantile(0.5), quantile(0.99), quantile(0.999),
                    sorted.empty() ? 0.0 : sorted.back(), long(over(16)), long(over(20)));
    }
    double longest() const { return m_gaps.empty() ? 0 : *std::max_element(m_gaps.begin(), m_gaps.end()); }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    double m_last = 0;
    std::vector<double> m_gaps;
};

/// The Models view's draw and the Label view's generation at once for 15 s, then the draw's Cancel.
int twoLongJobs(QApplication& app, d2dpo::ui::MainWindow& window, const QString& model, const QString& modelId)
{
    using namespace d2dpo::ui;
    std::printf("%s\n", d2dpo::describeAutoRuntime().c_str());
    std::printf("two long jobs at once on %s: the Models view drawing 100000 samples, the Label view generating "
                "500 pairs\n", qPrintable(model));
    StallMeter meter;
    meter.start();
    ModelsView* models = window.modelsView();
    auto* measurer = models->findChild<ModelMeasurer*>();
    QElapsedTimer cancelClock;
    QObject::connect(models, &ModelsView::statusMessage, &app,
                     [](const QString& message) { std::printf("Models view: %s\n", qPrintable(message)); });
    QTimer::singleShot(3000, &app, [&] {
        meter.stop();
        meter.print("idle");
        meter.start();
        window.showView(2);
        models->selectModel(modelId);
        models->setSampleCount(100000);
        window.labelView()->labelFrom(model, 500);
        window.showView(0);
    });
    QTimer::singleShot(18000, &app, [&] {
        meter.stop();
        meter.print("two jobs");
        std::printf("longest GUI-thread stall with two long jobs: %.1f ms (goal: under 50 ms)\n", meter.longest());
        const auto* bar = models->findChild<QProgressBar*>(QStringLiteral("samplingProgress"));
        std::printf("at 15 s: the Models view was %s (its bar: \"%s\"); the Label view was %s\n",
                    measurer && measurer->busy() ? "still drawing" : "done drawing", bar ? qPrintable(bar->format()) : "?",
                    window.labelView()->supply().busy() ? "still generating" : "done generating");
        cancelClock.start();
        models->cancelSampling();
    });
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &app, [&] {
        if (cancelClock.isValid() && measurer && !measurer->busy()) {
            std::printf("the Models view's Cancel ended its draw in %.2f s (goal: under 2 s)\n",
                        cancelClock.nsecsElapsed() / 1e9);
            app.exit(0);
        }
    });
    poll.start(5);
    return app.exec();
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
        qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    Q_INIT_RESOURCE(resources);
    d2dpo::keepFreedHostMemory(); // as d2dpo-studio does
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("d2dpo-studio-bench")); // leaves the user's settings alone
    QApplication::setApplicationName(QStringLiteral("d2dpo-gui-stall-bench"));
    QCommandLineParser parser;
    parser.addHelpOption();
    const QCommandLineOption stepsOption(QStringLiteral("steps"), QStringLiteral("D2-DPO steps (default 300)."),
                                         QStringLiteral("n"), QStringLiteral("300"));
    const QCommandLineOption shotOption(QStringLiteral("screenshot"),
                                        QStringLiteral("Save the window two thirds into the run."), QStringLiteral("png"));
    const QCommandLineOption twoJobsOption(QStringLiteral("two-jobs"),
                                           QStringLiteral("Two long jobs at once, then a Cancel, instead of training."));
    const QCommandLineOption modelOption(QStringLiteral("model"), QStringLiteral("With --two-jobs: this checkpoint."),
                                         QStringLiteral("checkpoint"));
    parser.addOptions({stepsOption, shotOption, twoJobsOption, modelOption});
    parser.process(app);

    QTemporaryDir dir;
    const QString storePath = dir.filePath(QStringLiteral("preferences.sqlite"));
    auto store = d2dpo::PreferenceStore::open(storePath.toStdString());
    QString error;
    const QString reference = d2dpo::ui::installShippedReference(storePath, error);
    auto generator = d2dpo::PairGenerator::load(reference.toStdString(), "cpu");
    if (!store || reference.isEmpty() || !generator) {
        std::fprintf(stderr, "d2dpo-gui-stall-bench: cannot set up: %s\n",
                     !store ? store.error().c_str() : reference.isEmpty() ? qPrintable(error) : generator.error().c_str());
        return 1;
    }
    (void)store.value()->addModel(generator.value()->model());
    QString ownId = QString::fromStdString(generator.value()->model().id);
    if (parser.isSet(modelOption)) {
        auto own = d2dpo::PairGenerator::load(parser.value(modelOption).toStdString(), "cpu");
        if (!own) {
            std::fprintf(stderr, "d2dpo-gui-stall-bench: %s\n", own.error().c_str());
            return 1;
        }
        (void)store.value()->addModel(own.value()->model());
        ownId = QString::fromStdString(own.value()->model().id);
    }

    d2dpo::ui::MainWindow window(std::move(store.value()));
    window.resize(1280, 800);
    window.show();
    if (parser.isSet(twoJobsOption))
        return twoLongJobs(app, window, parser.isSet(modelOption) ? parser.value(modelOption) : reference, ownId);
    window.showView(1);
    d2dpo::ui::TrainView* view = window.trainView();
    view->reload();
    view->useRulePairs(true, 20000);
    view->settingsForm()->restoreDefaults();
    const int steps = parser.value(stepsOption).toInt();
    view->settingsForm()->findChild<QLineEdit*>(QStringLiteral("steps"))->setText(QString::number(steps));

    std::printf("%s\n", d2dpo::describeAutoRuntime().c_str());
    std::printf("D2-DPO on the shipped N = 10 reference, 20000 rule-made pairs, %d steps, the Train view's defaults "
                "(batch 64, evaluation of 2000 samples every 50 steps)\n", steps);
    StallMeter meter;
    meter.start();
    QTimer::singleShot(3000, &app, [&] {
        meter.stop();
        meter.print("idle");
        meter.start();
        if (!view->start()) {
            std::fprintf(stderr, "d2dpo-gui-stall-bench: the run did not start:\n%s\n", qPrintable(view->logText()));
            app.exit(1);
        }
    });
    bool shot = false;
    QObject::connect(&view->runner(), &d2dpo::ui::TrainRunner::progress, &app, [&](const d2dpo::ProgressEvent& e) {
        if (!shot && parser.isSet(shotOption) && e.step >= e.totalSteps * 2 / 3) {
            shot = true;
            QTimer::singleShot(100, &app, [&] { window.grab().save(parser.value(shotOption)); });
        }
    });
    QObject::connect(view, &d2dpo::ui::TrainView::runFinished, &app, [&](d2dpo::RunStatus status) {
        meter.stop();
        meter.print("training");
        std::printf("run %s; longest GUI-thread stall while training: %.1f ms (goal: under 20 ms)\n",
                    d2dpo::toString(status), meter.longest());
        app.exit(status == d2dpo::RunStatus::Completed ? 0 : 1);
    });
    return app.exec();
}
