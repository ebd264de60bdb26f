// SPDX-License-Identifier: GPL-3.0-or-later
// Choices made while a team store cannot be reached are kept by the labeling session; this writes
// them when the server is back, trying every few seconds, and says on screen how many are waiting,
// how many went through and which the store refused (a pair that got its labels meanwhile).
#pragma once

#include <QObject>
#include <QString>

#include <string>
#include <vector>

class QTimer;

namespace d2dpo {
class LabelSession;
}

namespace d2dpo::ui {

class KeptLabelsRetry final : public QObject {
    Q_OBJECT
public:
    static constexpr int kRetryMs = 5000;
    KeptLabelsRetry(LabelSession& session, QObject* parent);

    /// After each label: starts trying when choices are kept, and says what an earlier write did.
    void afterLabel(bool kept, int keptWritten, const std::vector<std::string>& keptRefused);
    /// One try now (also what the timer runs).
    void retry();
    bool waiting() const;

Q_SIGNALS:
    void statusMessage(const QString& message);
    /// Kept choices were written (the counts and the queue changed).
    void written();

private:
    void report(int written, const std::vector<std::string>& refused);
    LabelSession& m_session;
    QTimer* m_timer = nullptr;
};

} // namespace d2dpo::ui
