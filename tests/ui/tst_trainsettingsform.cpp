// SPDX-License-Identifier: GPL-3.0-or-later
// The Train view's settings form: absurd values refused in words (the same words and limits as
// core's validate()), a batch larger than memory allows refused, and saved settings loaded back.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest/QtTest>

#include <functional>

#include "base/config.h"
#include "ui/train/trainsettingsform.h"

using namespace d2dpo;
using namespace d2dpo::ui;

namespace {

/// The same value set in a config, as `d2dpo train` would pass it to validate().
using Apply = std::function<Status(const QString& text)>;

Status dpo(const std::function<void(DpoConfig&)>& set)
{
    DpoConfig config;
    set(config);
    return validate(config);
}

Status schedule(const std::function<void(DpoScheduleConfig&)>& set)
{
    DpoScheduleConfig config;
    set(config);
    return validate(config);
}

} // namespace

Q_DECLARE_METATYPE(Apply)

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
            auto* precision = form.findChild<QComboBox*>(QStringLiteral("precision"));
            QCOMPARE(precision->count(), int(precisionNames().size())); // every name of the table, in its order
            QCOMPARE(form.settings()->dpo.precision, Precision::Float32);
            precision->setCurrentIndex(precision->findData(QStringLiteral("bf16")));
            QCOMPARE(form.settings()->dpo.precision, Precision::BFloat16);
            form.saveSettings();
        }
        TrainSettingsForm again;
        again.loadSettings();
        QVERIFY(again.settings().has_value());
        QCOMPARE(again.settings()->dpo.beta, 0.25);
        QCOMPARE(again.settings()->dpo.steps, 123);
        QCOMPARE(again.settings()->dpo.precision, Precision::BFloat16);
        again.restoreDefaults();
        again.saveSettings();
    }

    void theFormAndValidateRefuseTheSameValuesInTheSameWords_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("text");
        QTest::addColumn<Apply>("core");
        const auto real = [](const QString& t) { return t.toDouble(); };
        const auto whole = [](const QString& t) { return t.toInt(); };
        QTest::newRow("beta 0") << "beta" << "0" << Apply([=](const QString& t) {
            return dpo([&](DpoConfig& c) { c.beta = real(t); });
        });
        QTest::newRow("beta too large") << "beta" << "20000" << Apply([=](const QString& t) {
            return dpo([&](DpoConfig& c) { c.beta = real(t); });
        });
        QTest::newRow("learning rate 2") << "learningRate" << "2" << Apply([=](const QString& t) {
            return dpo([&](DpoConfig& c) { c.learningRate = real(t); });
        });
        QTest::newRow("batch 0") << "batch" << "0" << Apply([=](const QString& t) {
            return dpo([&](DpoConfig& c) { c.batch = whole(t); });
        });
        QTest::newRow("steps 0") << "steps" << "0" << Apply([=](const QString& t) {
            return dpo([&](DpoConfig& c) { c.steps = whole(t); });
        });
        QTest::newRow("t-samples 2000") << "tSamples" << "2000" << Apply([=](const QString& t) {
            return dpo([&](DpoConfig& c) { c.tSamplesPerPair = whole(t); });
        });
        QTest::newRow("vrpo 0") << "vrpoSamples" << "0" << Apply([=](const QString& t) {
            return dpo([&](DpoConfig& c) { c.vrpoSamples = whole(t); });
        });
        QTest::newRow("label smoothing 0.5") << "labelSmoothing" << "0.5" << Apply([=](const QString& t) {
            return dpo([&](DpoConfig& c) { c.labelSmoothing = real(t); });
        });
        QTest::newRow("rpo alpha -1") << "rpoAlpha" << "-1" << Apply([=](const QString& t) {
            return dpo([&](DpoConfig& c) { c.rpoAlpha = real(t); });
        });
        QTest::newRow("evaluate every -1") << "evalEvery" << "-1" << Apply([=](const QString& t) {
            return schedule([&](DpoScheduleConfig& c) { c.evalEvery = whole(t); });
        });
        QTest::newRow("evaluation samples 0") << "evalSamples" << "0" << Apply([=](const QString& t) {
            return schedule([&](DpoScheduleConfig& c) { c.evalSamples = whole(t); });
        });
        QTest::newRow("eta 101") << "eta" << "101" << Apply([=](const QString& t) {
            NoiseConfig noise;
            noise.eta = real(t);
            return validate(noise);
        });
        QTest::newRow("sampling steps 0") << "samplingSteps" << "0" << Apply([=](const QString& t) {
            SamplingConfig sampling;
            sampling.steps = whole(t);
            return validate(sampling);
        });
    }

    void theFormAndValidateRefuseTheSameValuesInTheSameWords()
    {
        QFETCH(QString, field);
        QFETCH(QString, text);
        QFETCH(Apply, core);
        const Status refused = core(text);
        QVERIFY2(!refused.ok(), "core accepts the value: the row tests nothing");
        TrainSettingsForm form;
        QVERIFY(form.settings().has_value());
        auto* edit = form.findChild<QLineEdit*>(field);
        QVERIFY(edit);
        edit->setText(text);
        QVERIFY(!form.settings().has_value());
        QVERIFY2(form.problems().contains(QString::fromStdString(refused.error())),
                 qPrintable(form.problems().join(" | ") + "\nvalidate(): " + QString::fromStdString(refused.error())));
        form.restoreDefaults();
    }

    void theFormAcceptsWhatValidateAccepts()
    {
        TrainSettingsForm form;
        const auto settings = form.settings();
        QVERIFY(settings.has_value());
        QVERIFY(validate(settings->dpo).ok());
        QVERIFY(validate(settings->schedule).ok());
        QVERIFY(validate(settings->sampling).ok());
    }
};

QTEST_MAIN(TestTrainSettingsForm)
#include "tst_trainsettingsform.moc"
