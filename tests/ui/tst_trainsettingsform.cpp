// SPDX-License-Identifier: GPL-3.0-or-later
// The Train view's settings form: absurd values refused in words, a batch larger than memory allows
// refused, and saved settings loaded back by a new form.
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest/QtTest>

#include "base/config.h"
#include "ui/trainsettingsform.h"

using namespace d2dpo;
using namespace d2dpo::ui;

class TestTrainSettingsForm final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings go to a test location
        QCoreApplication::setOrganizationName(QStringLiteral("d2dpo-studio-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_trainsettingsform"));
    }

    void theFormRefusesAbsurdValuesInWords_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("beta zero") << "beta" << "0" << "Beta must be greater than 0";
        QTest::newRow("beta negative") << "beta" << "-0.5" << "Beta must be greater than 0";
        QTest::newRow("lr zero") << "learningRate" << "0" << "Learning rate must be greater than 0";
        QTest::newRow("lr negative") << "learningRate" << "-1e-4" << "Learning rate must be greater than 0";
        QTest::newRow("lr huge") << "learningRate" << "5" << "at most 1";
        QTest::newRow("steps zero") << "steps" << "0" << "Steps must be between 1";
        QTest::newRow("batch zero") << "batch" << "0" << "Batch must be between 1";
        QTest::newRow("not a number") << "beta" << "abc" << "is not a number";
        QTest::newRow("eta negative") << "eta" << "-1" << "Eta must be between 0 and 100";
        QTest::newRow("t-samples") << "tSamples" << "0" << "t-samples per pair must be between 1";
        QTest::newRow("fraction of a step") << "steps" << "2.5" << "is not a whole number";
    }

    void theFormRefusesAbsurdValuesInWords()
    {
        QFETCH(QString, field);
        QFETCH(QString, text);
        QFETCH(QString, message);
        TrainSettingsForm form;
        QVERIFY(form.settings().has_value());
        QVERIFY(form.problems().isEmpty());
        QSignalSpy validity(&form, &TrainSettingsForm::validityChanged);
        auto* edit = form.findChild<QLineEdit*>(field);
        QVERIFY(edit);
        edit->setText(text);
        QVERIFY(!form.settings().has_value());
        QVERIFY2(form.problems().join(' ').contains(message), qPrintable(form.problems().join(" | ")));
        QCOMPARE(validity.size(), 1);
        QCOMPARE(validity.at(0).at(0).toBool(), false);
        QVERIFY(form.findChild<QLabel*>(QStringLiteral("problems"))->text().contains(message));
        form.restoreDefaults();
        QVERIFY(form.settings().has_value());
    }

    void theFormRefusesABatchLargerThanMemoryAllows()
    {
        TrainSettingsForm form;
        ModelSpec large;
        large.task.length = 64;
        large.model.dModel = 256;
        large.model.layers = 4;
        form.setModelSpec(large);
        form.setAvailableMemoryOverride(int64_t(8) << 30); // 8 GiB
        form.findChild<QLineEdit*>(QStringLiteral("batch"))->setText(QStringLiteral("256"));
        QVERIFY2(form.settings().has_value(), qPrintable(form.problems().join(" | "))); // the large benchmark fits
        form.findChild<QLineEdit*>(QStringLiteral("batch"))->setText(QStringLiteral("1000000"));
        QVERIFY(!form.settings().has_value());
        QVERIFY2(form.problems().join(' ').contains(QStringLiteral("of memory is available")),
                 qPrintable(form.problems().join(" | ")));
    }

    void savedSettingsAreLoadedBackByANewForm()
    {
        {
            TrainSettingsForm form;
            form.findChild<QLineEdit*>(QStringLiteral("beta"))->setText(QStringLiteral("0.25"));
            form.findChild<QLineEdit*>(QStringLiteral("steps"))->setText(QStringLiteral("123"));
            form.saveSettings();
        }
        TrainSettingsForm again;
        again.loadSettings();
        QVERIFY(again.settings().has_value());
        QCOMPARE(again.settings()->dpo.beta, 0.25);
        QCOMPARE(again.settings()->dpo.steps, 123);
        again.restoreDefaults();
        again.saveSettings();
    }
};

QTEST_MAIN(TestTrainSettingsForm)
#include "tst_trainsettingsform.moc"
