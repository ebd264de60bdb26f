// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/newmodel/filefield.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>

namespace d2dpo::ui {

FileField::FileField(const QString& objectName, const QString& placeholder, const QString& filter, bool folders,
                     QWidget* parent)
    : QWidget(parent)
{
    m_edit = new QLineEdit(this);
    m_edit->setObjectName(objectName);
    m_edit->setPlaceholderText(placeholder);
    auto* browse = new QPushButton(tr("Browse…"), this);
    connect(browse, &QPushButton::clicked, this, [this, filter] {
        const QString path = QFileDialog::getOpenFileName(this, m_edit->placeholderText(), {}, filter);
        if (!path.isEmpty())
            m_edit->setText(path);
    });
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_edit, 1);
    row->addWidget(browse);
    if (folders) {
        auto* folder = new QPushButton(tr("Folder…"), this);
        folder->setObjectName(objectName + QStringLiteral("Folder"));
        connect(folder, &QPushButton::clicked, this, [this] {
            const QString path = QFileDialog::getExistingDirectory(this, m_edit->placeholderText());
            if (!path.isEmpty())
                m_edit->setText(path);
        });
        row->addWidget(folder);
    }
}

QString FileField::path() const { return m_edit->text().trimmed(); }

} // namespace d2dpo::ui
