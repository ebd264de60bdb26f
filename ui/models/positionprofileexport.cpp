// SPDX-License-Identifier: GPL-3.0-or-later
// PositionProfilePanel's Export…: the logos as on screen (PNG and SVG) and the figures as CSV.
#include "ui/models/positionprofilepanel.h"

#include <QBuffer>
#include <QDir>
#include <QFileDialog>
#include <QImage>
#include <QMessageBox>
#include <QPainter>
#include <QSvgGenerator>

#include <algorithm>
#include <string_view>

#include "base/safeoutput.h"
#include "ui/common/sequencelogo.h"

namespace d2dpo::ui {

QSize PositionProfilePanel::logosSize() const
{
    const QSize model = m_modelLogo->sizeHint();
    if (!hasReference())
        return model;
    const QSize reference = m_referenceLogo->sizeHint();
    return {std::max(model.width(), reference.width()), model.height() + reference.height()};
}

void PositionProfilePanel::renderLogos(QPainter& painter) const
{
    painter.fillRect(QRect(QPoint(0, 0), logosSize()), Qt::white);
    painter.save();
    if (hasReference()) {
        m_referenceLogo->render(painter);
        painter.translate(0, m_referenceLogo->sizeHint().height());
    }
    m_modelLogo->render(painter);
    painter.restore();
}

Status PositionProfilePanel::exportTo(const QString& folder) const
{
    if (m_model.sequences.empty())
        return makeError("there are no samples to export");
    const QDir dir(folder);
    if (!dir.exists())
        return makeError("the folder " + folder.toStdString() + " does not exist");

    QImage image(logosSize(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        renderLogos(painter);
    }
    QByteArray png;
    QBuffer pngBuffer(&png);
    pngBuffer.open(QIODevice::WriteOnly);
    if (!image.save(&pngBuffer, "PNG"))
        return makeError("could not encode the logos as PNG");
    if (Status written = AtomicFile::write(dir.filePath(QStringLiteral("logos.png")).toStdString(),
                                           std::string_view(png.constData(), size_t(png.size())));
        !written)
        return written;

    QByteArray svg;
    QBuffer svgBuffer(&svg);
    QSvgGenerator generator;
    generator.setOutputDevice(&svgBuffer);
    generator.setSize(logosSize());
    generator.setViewBox(QRect(QPoint(0, 0), logosSize()));
    generator.setTitle(tr("Sequence logos"));
    generator.setDescription(tr("Sequence logos of %1 and %2, drawn by d2dpo-studio")
                                 .arg(QString::fromStdString(m_reference.name), QString::fromStdString(m_model.name)));
    {
        QPainter painter(&generator);
        renderLogos(painter);
    }
    if (Status written = AtomicFile::write(dir.filePath(QStringLiteral("logos.svg")).toStdString(),
                                           std::string_view(svg.constData(), size_t(svg.size())));
        !written)
        return written;

    return writeProfileCsvs(folder.toStdString(), shownSets(), m_training.sequences);
}

void PositionProfilePanel::exportFromDialog()
{
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Export the per-position figures to"));
    if (folder.isEmpty())
        return;
    if (Status written = exportTo(folder); !written) {
        QMessageBox::warning(this, tr("Export"), QString::fromStdString(written.error()));
        return;
    }
    Q_EMIT exported(folder);
}

} // namespace d2dpo::ui
