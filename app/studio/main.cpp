// SPDX-License-Identifier: GPL-3.0-or-later
// d2dpo-studio: the desktop application. Wiring only: open the store, ask the labeler's name once,
// make sure a model exists (first launch), show the main window.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QInputDialog>
#include <QMessageBox>
#include <QSettings>
#include <QTimer>

#include <cstdio>

#include "ui/closeonsignals.h"
#include "ui/firstrun.h"
#include "base/hostmemory.h"
#include "ui/labelview.h"
#include "ui/mainwindow.h"
#include "store/preferencestore.h"

int main(int argc, char** argv)
{
    Q_INIT_RESOURCE(resources);
    d2dpo::keepFreedHostMemory(); // every training step reuses the previous step's pages
    QElapsedTimer sinceStart;
    sinceStart.start();
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("d2dpo-studio"));
    QApplication::setApplicationName(QStringLiteral("d2dpo-studio"));
    QApplication::setApplicationVersion(QStringLiteral("0.1.0"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Label pairs of generated sequences, fine-tune the model on them with D2-DPO, browse and export the models."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption dbOption(QStringLiteral("db"), QStringLiteral("Preference store (SQLite file) to use."),
                                      QStringLiteral("path"));
    const QCommandLineOption labelerOption(QStringLiteral("labeler"), QStringLiteral("Labeler name (remembered)."),
                                           QStringLiteral("name"));
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"), QStringLiteral("Save a picture of the window once a pair is shown, then quit."),
        QStringLiteral("png"));
    const QCommandLineOption hideHintsOption(QStringLiteral("hide-hints"), QStringLiteral("Start with hints hidden."));
    parser.addOptions({dbOption, labelerOption, screenshotOption, hideHintsOption});
    parser.process(app);

    QSettings settings;
    const QString storePath = parser.isSet(dbOption)
                                  ? parser.value(dbOption)
                                  : settings.value("store/path", QString::fromStdString(d2dpo::PreferenceStore::defaultPath()))
                                        .toString();
    auto store = d2dpo::PreferenceStore::open(storePath.toStdString());
    if (!store) {
        const QString message = QString::fromStdString(store.error());
        std::fprintf(stderr, "d2dpo-studio: %s\n", qPrintable(message));
        QMessageBox::critical(nullptr, QStringLiteral("d2dpo-studio"), message);
        return 1;
    }
    if (parser.isSet(dbOption))
        settings.setValue("store/path", storePath);
    const bool noModels = store.value()->models().ok() && store.value()->models().value().empty();

    QString labeler = parser.isSet(labelerOption) ? parser.value(labelerOption) : settings.value("labeler/name").toString();
    if (labeler.trimmed().isEmpty()) {
        bool ok = false;
        labeler = QInputDialog::getText(nullptr, QStringLiteral("d2dpo-studio"),
                                        QStringLiteral("Your name (recorded with each label):"), QLineEdit::Normal,
                                        qEnvironmentVariable("USER"), &ok);
        if (!ok)
            return 0;
    }
    settings.setValue("labeler/name", labeler.trimmed());

    d2dpo::ui::MainWindow window(std::move(store.value()));
    d2dpo::ui::CloseOnSignals closeOnSignals(&window, [&window] { window.closeWithoutAsking(); });
    d2dpo::ui::LabelView* view = window.labelView();
    view->setLabeler(labeler);
    if (parser.isSet(hideHintsOption))
        view->setHintsVisible(false);
    window.show();

    if (noModels) {
        QString error;
        const QString reference = d2dpo::ui::installShippedReference(storePath, error);
        if (reference.isEmpty())
            QMessageBox::warning(&window, QStringLiteral("d2dpo-studio"), error);
        else
            view->generateFrom(reference);
    }

    // Report when the first pair is on screen; with --screenshot, save a picture then and quit.
    auto* poll = new QTimer(&window);
    QObject::connect(poll, &QTimer::timeout, &window, [&, poll] {
        const bool shown = view->currentPair().has_value();
        if (!shown && sinceStart.elapsed() < 120000)
            return;
        poll->stop();
        std::fprintf(stderr, "d2dpo-studio: %s after %.1f s\n", shown ? "first pair on screen" : "no pair yet",
                     sinceStart.elapsed() / 1000.0);
        if (parser.isSet(screenshotOption)) {
            QTimer::singleShot(300, &window, [&] {
                window.grab().save(parser.value(screenshotOption));
                window.close();
            });
        }
    });
    poll->start(20);
    return app.exec();
}
