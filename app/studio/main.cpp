// SPDX-License-Identifier: GPL-3.0-or-later
// d2dpo-studio: the desktop application. Wiring only: open the store, ask the labeler's name once,
// make sure a model exists (first launch), show the main window.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "base/abandonablecall.h"
#include "labeling/labeleridentity.h"
#include "ui/shell/closeonsignals.h"
#include "ui/shell/firstrun.h"
#include "base/hostmemory.h"
#include "base/safeoutput.h"
#include "ui/experts/labelername.h"
#include "ui/shell/storelaunch.h"
#include "ui/label/labelview.h"
#include "ui/shell/mainwindow.h"
#include "ui/shell/stallwatch.h"
#include "ui/common/wheelguard.h"
#include "store/preferencestore.h"

namespace {

/// The command line: the same for --help and --version (which need no display) and for a run.
struct Options {
    QCommandLineParser parser;
    QCommandLineOption db{QStringLiteral("db"), QStringLiteral("Preference store (SQLite file) to use."),
                          QStringLiteral("path")};
    QCommandLineOption labeler{QStringLiteral("labeler"), QStringLiteral("Labeler name (remembered)."),
                               QStringLiteral("name")};
    QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                  QStringLiteral("Save a picture of the window once a pair is shown, then quit."),
                                  QStringLiteral("png")};
    QCommandLineOption tab{QStringLiteral("tab"), QStringLiteral("The view to open: label, train, models or measurements."),
                           QStringLiteral("view")};
    QCommandLineOption size{QStringLiteral("size"), QStringLiteral("Window size, WIDTHxHEIGHT (for screenshots)."),
                            QStringLiteral("size")};
    QCommandLineOption delay{QStringLiteral("screenshot-delay"),
                             QStringLiteral("With --screenshot: wait this many seconds more (samples being drawn)."),
                             QStringLiteral("seconds"), QStringLiteral("0")};
    QCommandLineOption hideHints{QStringLiteral("hide-hints"), QStringLiteral("Start with hints hidden.")};
    QCommandLineOption stallLog{QStringLiteral("stall-log"),
                                QStringLiteral("Append every stall of the window's thread over 100 ms to this file, "
                                               "with what the window said, and a summary at exit."),
                                QStringLiteral("file")};

    Options()
    {
        parser.setApplicationDescription(QStringLiteral("Label pairs of generated sequences, fine-tune the model on "
                                                        "them with D2-DPO, browse and export the models."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addOptions({db, labeler, screenshot, delay, tab, size, hideHints, stallLog});
    }
};

void nameApplication()
{
    QCoreApplication::setOrganizationName(QStringLiteral("d2dpo-studio"));
    QCoreApplication::setApplicationName(QStringLiteral("d2dpo-studio"));
    QCoreApplication::setApplicationVersion(QStringLiteral("0.1.0"));
}


/// --help and --version are answered without a display (QCoreApplication needs none); true when asked.
bool answeredWithoutDisplay(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray arg(argv[i]);
        if (arg == "-h" || arg == "--help" || arg == "--help-all" || arg == "-v" || arg == "--version") {
            QCoreApplication core(argc, argv);
            nameApplication();
            Options help;
            help.parser.process(core); // prints and exits
            return true;
        }
    }
    return false;
}

/// Without a display Qt aborts (exit 134) with a plugin message a user cannot act on: say what is
/// missing and what to run instead. True when there is a display (or an offscreen platform).
bool haveDisplay()
{
    if (!qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") || !qEnvironmentVariableIsEmpty("DISPLAY") ||
        !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        return true;
    std::fprintf(stderr, "d2dpo-studio: no display (DISPLAY and WAYLAND_DISPLAY are unset): run it in a desktop "
                         "session or under xvfb-run, or use its command-line twin d2dpo (d2dpo --help)\n");
    return false;
}

/// The store to open: --db, else the last one (a window that opened this one may have handed the
/// store's password over, never in argv).
QString storeToOpen(const Options& options)
{
    const QCommandLineParser& parser = options.parser;
    return d2dpo::ui::storeWithHandedPassword(
        parser.isSet(options.db)
            ? parser.value(options.db)
            : QSettings().value("store/path", QString::fromStdString(d2dpo::PreferenceStore::defaultPath())).toString());
}

/// Who labels: a team store's database role; elsewhere --labeler, else the remembered name, else
/// asked for. Empty when the question was cancelled; nullopt (said on stderr) when refused.
std::optional<QString> labelerFor(d2dpo::PreferenceStore& store, const Options& options)
{
    auto resolved = d2dpo::resolveLabeler(store, options.parser.value(options.labeler).toStdString(),
                                          d2dpo::ui::rememberedLabeler().toStdString());
    if (!resolved) {
        std::fprintf(stderr, "d2dpo-studio: %s\n", resolved.error().c_str());
        return std::nullopt;
    }
    QString labeler = QString::fromStdString(resolved.value());
    if (labeler.isEmpty())
        labeler = d2dpo::ui::askLabelerName(nullptr, QStringLiteral("d2dpo-studio"), qEnvironmentVariable("USER"));
    if (!labeler.isEmpty() && !store.isTeamStore())
        d2dpo::ui::rememberLabeler(labeler);
    return labeler;
}

/// --hide-hints, --size and --tab; false (said on stderr) for a view that does not exist.
bool applyWindowOptions(d2dpo::ui::MainWindow& window, const Options& options)
{
    const QCommandLineParser& parser = options.parser;
    if (parser.isSet(options.hideHints))
        window.labelView()->setHintsVisible(false);
    if (parser.isSet(options.size)) {
        const QStringList wh = parser.value(options.size).split(QLatin1Char('x'));
        if (wh.size() == 2 && wh[0].toInt() > 0 && wh[1].toInt() > 0)
            window.resize(wh[0].toInt(), wh[1].toInt());
    }
    if (parser.isSet(options.tab)) {
        const QString tab = parser.value(options.tab);
        const int index = tab == QLatin1String("label") ? 0 : tab == QLatin1String("train") ? 1
                        : tab == QLatin1String("models") ? 2
                        : tab == QLatin1String("measurements") ? 3 : -1;
        if (index < 0) {
            std::fprintf(stderr, "d2dpo-studio: --tab takes label, train, models or measurements (got %s)\n", qPrintable(tab));
            return false;
        }
        window.showView(index);
    }
    return true;
}

/// --stall-log: the window's thread watched, appended to a file that is never the store, a model or
/// a device (a mistyped path would corrupt them). False (said on stderr) when it cannot be written.
bool watchStalls(const Options& options, const QString& storePath, d2dpo::ui::MainWindow& window,
                 std::unique_ptr<d2dpo::ui::StallWatch>& stalls)
{
    if (!options.parser.isSet(options.stallLog))
        return true;
    const QString path = options.parser.value(options.stallLog);
    if (d2dpo::Status s = d2dpo::checkOutputFile(path.toStdString(), d2dpo::storeFiles(storePath.toStdString())); !s) {
        std::fprintf(stderr, "d2dpo-studio: --stall-log: %s\n", s.error().c_str());
        return false;
    }
    stalls = std::make_unique<d2dpo::ui::StallWatch>(path, 100.0, [&window] {
        return window.windowTitle() + QStringLiteral(" | ") + window.statusBar()->currentMessage();
    });
    if (!stalls->isOpen()) {
        std::fprintf(stderr, "d2dpo-studio: cannot write the stall log %s\n", qPrintable(path));
        return false;
    }
    return true;
}

/// Says on stderr when the first pair is on screen (or that none came in 2 minutes); with
/// --screenshot, saves a picture of the window then and quits.
void reportFirstPair(d2dpo::ui::MainWindow& window, const Options& options, const QElapsedTimer& sinceStart)
{
    auto* poll = new QTimer(&window);
    QObject::connect(poll, &QTimer::timeout, &window, [&window, &options, &sinceStart, poll] {
        const bool shown = window.labelView()->currentPair().has_value();
        if (!shown && sinceStart.elapsed() < 120000)
            return;
        poll->stop();
        std::fprintf(stderr, "d2dpo-studio: %s after %.1f s\n", shown ? "first pair on screen" : "no pair yet",
                     sinceStart.elapsed() / 1000.0);
        if (options.parser.isSet(options.screenshot)) {
            QTimer::singleShot(300 + int(1000 * options.parser.value(options.delay).toDouble()), &window,
                               [&window, &options] {
                                   window.grab().save(options.parser.value(options.screenshot));
                                   window.close();
                               });
        }
    });
    poll->start(20);
}

} // namespace

int main(int argc, char** argv)
{
    Q_INIT_RESOURCE(resources);
    d2dpo::keepFreedHostMemory(); // every training step reuses the previous step's pages
    QElapsedTimer sinceStart;
    sinceStart.start();
    if (answeredWithoutDisplay(argc, argv))
        return 0;
    if (!haveDisplay())
        return 1;
    QApplication app(argc, argv);
    d2dpo::ui::installWheelGuard(app);
    nameApplication();
    Options options;
    options.parser.process(app);

    const QString storePath = storeToOpen(options);
    auto store = d2dpo::PreferenceStore::open(storePath.toStdString());
    if (!store) {
        const QString message = QString::fromStdString(store.error());
        std::fprintf(stderr, "d2dpo-studio: %s\n", qPrintable(message));
        QMessageBox::critical(nullptr, QStringLiteral("d2dpo-studio"), message);
        return 1;
    }
    if (options.parser.isSet(options.db)) // a team store's URL without its password: ~/.pgpass supplies it
        QSettings().setValue("store/path", QString::fromStdString(store.value()->displayName()));
    const auto models = store.value()->models();
    const bool noModels = models.ok() && models.value().empty();
    const std::optional<QString> labeler = labelerFor(*store.value(), options);
    if (!labeler)
        return 1;
    if (labeler->isEmpty())
        return 0; // the question was cancelled

    d2dpo::ui::MainWindow window(std::move(store.value()));
    d2dpo::ui::CloseOnSignals closeOnSignals(&window, [&window] { window.closeWithoutAsking(); });
    window.labelView()->setLabeler(*labeler);
    if (!applyWindowOptions(window, options))
        return 2;
    std::unique_ptr<d2dpo::ui::StallWatch> stalls;
    if (!watchStalls(options, storePath, window, stalls))
        return 2;
    window.show();
    if (noModels) { // the first launch: the shipped reference model, and pairs from it
        QString error;
        const QString reference = d2dpo::ui::installShippedReference(storePath, error);
        if (reference.isEmpty())
            QMessageBox::warning(&window, QStringLiteral("d2dpo-studio"), error);
        else
            window.labelView()->generateFrom(reference);
    }
    reportFirstPair(window, options, sinceStart);
    const int exitCode = app.exec();
    // A call into a model's code that never returned (base/abandonablecall.h) still runs on its
    // thread: the settings are written and the process ends here, before anything it uses is
    // destroyed under it (the store is safe: SQLite's journal and the server need no goodbye).
    if (d2dpo::abandonedCalls() > 0) {
        QSettings().sync();
        std::fflush(nullptr);
        std::_Exit(exitCode);
    }
    return exitCode;
}
