// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/shell/helptexts.h"

#include <QCoreApplication>
#include <QtGlobal>

#include "facades/runtimeinfo.h"

namespace d2dpo::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("HelpTexts", text); }

} // namespace

QString workflowText()
{
    return tr("<ol>"
              "<li><b>Label</b>: two sequences from a model are shown; pick the better one with the keys "
              "(Help ▸ Keyboard shortcuts). Each label is saved the moment it is made. The line above the pair "
              "says which model made it.</li>"
              "<li><b>Train</b>: choose the reference model and whose labels to train on (simulated rule:… "
              "labelers are left out unless ticked), check the settings, press Start. The plots show the loss, "
              "the task's metrics against the reference, and the reward metrics. Stop keeps a checkpoint; a "
              "stopped or interrupted run can be resumed from Past runs.</li>"
              "<li><b>Models</b>: every fine-tuned model with its lineage, metrics and samples; export it for "
              "Python, or label pairs from it and train again from it.</li>"
              "</ol>"
              "<p>Your own sequences: File ▸ New model from a data file… (FASTA or one sequence per line).</p>");
}

QString aboutText(const QString& storePath)
{
    return tr("<h3>d2dpo-studio %1</h3>"
              "<p>Align discrete diffusion models to expert preferences with D2-DPO.</p>"
              "<p>Licence: GNU GPL, version 3 or later.</p>"
              "<p>Qt %2 · LibTorch %3</p>"
              "<p>Preference store: <tt>%4</tt></p>")
        .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion()),
             QString::fromStdString(libtorchVersion()), storePath.toHtmlEscaped());
}

} // namespace d2dpo::ui
