// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/exportprogress.h"

#include <QProgressDialog>
#include <QPushButton>

#include <algorithm>
#include <memory>

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
    dialog->setLabelText(QProgressDialog::tr("Writing %1's files to %2…").arg(modelName, folder));
    dialog->setWindowModality(Qt::NonModal);
    dialog->setAutoClose(false);
    dialog->setAutoReset(false);
    dialog->setMinimumDuration(0);
    dialog->setRange(0, 0); // busy until the first pass is heard
    dialog->setMinimumWidth(420);
    // Set once the model's files are out: from then on a Cancel skips the samples and keeps them.
    auto planned = std::make_shared<QString>();
    QObject::connect(dialog, &QProgressDialog::canceled, exporter, [dialog, exporter, planned] {
        exporter->cancel();
        // Shown again until the draw hears the stop (within a pass) and the export ends.
        dialog->setLabelText(planned->isEmpty()
                                 ? QProgressDialog::tr("Stopping: nothing will be written…")
                                 : QProgressDialog::tr("Skipping the samples: the model's files stay…"));
        if (auto* button = dialog->findChild<QPushButton*>())
            button->setEnabled(false);
        dialog->show();
    });
    QObject::connect(exporter, &ModelExporter::samplesPlanned, dialog, [dialog, planned, folder](const QString& plan) {
        if (dialog->wasCanceled())
            return;
        *planned = QProgressDialog::tr("The model's files are written to %1. Drawing %2…").arg(folder, plan);
        dialog->setLabelText(*planned);
        dialog->setCancelButtonText(QProgressDialog::tr("Skip samples"));
    });
    QObject::connect(exporter, &ModelExporter::progress, dialog,
                     [dialog, planned](double done, qint64 total, double secondsLeft) {
                         if (dialog->wasCanceled())
                             return;
                         dialog->setRange(0, int(std::max<qint64>(1, total) * kSteps));
                         dialog->setValue(int(done * kSteps));
                         dialog->setLabelText(
                             done >= double(total)
                                 ? QProgressDialog::tr("Writing the samples and the model card…")
                                 : *planned + QLatin1Char('\n') +
                                       QProgressDialog::tr("%1 / %2 samples · %3 left")
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
