// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/exportprogress.h"

#include <QProgressDialog>
#include <QPushButton>

#include <algorithm>

#include "base/timeutil.h"
#include "ui/models/modelexporter.h"

namespace d2dpo::ui {

namespace {
constexpr int kSteps = 100; ///< hundredths of a sample: a bar that moves within a sample too
}

void showExportProgress(ModelExporter* exporter, QWidget* parent, const QString& modelName, const QString& folder)
{
    auto* dialog = new QProgressDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(QProgressDialog::tr("Exporting %1").arg(modelName));
    dialog->setLabelText(
        QProgressDialog::tr("Loading %1 to draw the samples of its export to %2…").arg(modelName, folder));
    dialog->setWindowModality(Qt::NonModal);
    dialog->setAutoClose(false);
    dialog->setAutoReset(false);
    dialog->setMinimumDuration(0);
    dialog->setRange(0, 0); // busy until the first pass is heard
    dialog->setMinimumWidth(420);
    QObject::connect(dialog, &QProgressDialog::canceled, exporter, [dialog, exporter] {
        exporter->cancel();
        // Shown again until the draw hears the stop (within a pass) and the export ends.
        dialog->setLabelText(QProgressDialog::tr("Stopping: nothing will be written…"));
        if (auto* button = dialog->findChild<QPushButton*>())
            button->setEnabled(false);
        dialog->show();
    });
    QObject::connect(exporter, &ModelExporter::progress, dialog,
                     [dialog, modelName](double done, qint64 total, double secondsLeft) {
                         if (dialog->wasCanceled())
                             return;
                         dialog->setRange(0, int(std::max<qint64>(1, total) * kSteps));
                         dialog->setValue(int(done * kSteps));
                         dialog->setLabelText(
                             done >= double(total)
                                 ? QProgressDialog::tr("Writing the weights, the samples and the model card…")
                                 : QProgressDialog::tr("Drawing the export's samples from %1: %2 / %3 · %4 left")
                                       .arg(modelName)
                                       .arg(int(done))
                                       .arg(total)
                                       .arg(QString::fromStdString(clockDuration(secondsLeft))));
                     });
    QObject::connect(exporter, &ModelExporter::finished, dialog, [dialog] {
        // Closing a progress dialog says "canceled": the export is over, so nothing listens now.
        QObject::disconnect(dialog, &QProgressDialog::canceled, nullptr, nullptr);
        dialog->close();
    });
    dialog->show();
}

} // namespace d2dpo::ui
