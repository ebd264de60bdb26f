// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view suites' common start: a store of binary-integers pairs (N = 10) and a Label view
// on it, shown, labelling as "tester"; deliberate key presses and the last label stored.
#pragma once

#include <QObject>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <memory>
#include <string>
#include <vector>

#include "store/preferencestore.h"
#include "ui/label/labelview.h"

namespace d2dpo::test {

/// `n` binary-integers:10 pairs, never the same sequence on both sides (some invalid).
inline std::vector<ShownPair> binaryPairs(int n)
{
    std::vector<ShownPair> pairs;
    for (int i = 0; i < n; ++i) {
        const int a = i % 11, b = (i * 7 + 3) % 11;
        std::string left(10, '0'), right(10, '0');
        for (int k = 0; k < a; ++k)
            left[size_t(k)] = '1';
        for (int k = 0; k < b; ++k)
            right[size_t(k)] = '1';
        if (left == right)
            right[9] = right[9] == '1' ? '0' : '1'; // make it differ (invalid)
        pairs.push_back({0, left, right, "", "", "binary-integers:10"});
    }
    return pairs;
}

/// The base of a Label view suite (a QObject: the suite adds Q_OBJECT and its slots).
class LabelViewFixture : public QObject {
protected:
    QTemporaryDir m_dir;
    int m_stores = 0;
    std::unique_ptr<PreferenceStore> m_store;
    std::unique_ptr<ui::LabelView> m_view;

    /// A new, empty store in m_store (the view on the old one closed first).
    void freshStore()
    {
        m_view.reset();
        m_store = std::move(
            PreferenceStore::open(m_dir.filePath(QString("s%1.sqlite").arg(++m_stores)).toStdString()).value());
    }

    /// A new store with `pairs` pending pairs and a view on it.
    void freshView(int pairs)
    {
        freshStore();
        QVERIFY(m_store->addPairs(binaryPairs(pairs), "generated").ok());
        showView();
    }

    /// A Label view on m_store, shown, labelling as "tester" with no minimum decision time.
    void showView()
    {
        m_view = std::make_unique<ui::LabelView>(*m_store);
        m_view->setLabeler("tester");
        m_view->resize(1000, 400);
        m_view->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_view.get()));
    }

    /// A deliberate press: the key, then the time for the next pair to be painted (as a person
    /// needs far longer than that to see it).
    void press(Qt::Key key, Qt::KeyboardModifiers modifiers = Qt::NoModifier)
    {
        QTest::keyClick(m_view.get(), key, modifiers);
        QTest::qWait(20);
    }

    LabelRecord lastLabel()
    {
        const auto labels = m_store->labels(true).value();
        return labels.empty() ? LabelRecord{} : labels.back();
    }
};

} // namespace d2dpo::test
