// SPDX-License-Identifier: GPL-3.0-or-later
// A path typed or chosen: a line edit with Browse… (a file) and, where a folder is an answer too
// (published weights), Folder…. The line edit carries the field's object name, for tests and
// accessibility.
#pragma once

#include <QWidget>

class QLineEdit;

namespace d2dpo::ui {

class FileField final : public QWidget {
    Q_OBJECT

public:
    FileField(const QString& objectName, const QString& placeholder, const QString& filter, bool folders,
              QWidget* parent = nullptr);

    QLineEdit* edit() const { return m_edit; }
    QString path() const;

private:
    QLineEdit* m_edit = nullptr;
};

} // namespace d2dpo::ui
