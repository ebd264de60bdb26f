// SPDX-License-Identifier: GPL-3.0-or-later
// The Train view's settings form and core's validate() refuse the same values with the same
// words: the form reads the text, the limits and the sentences are config.h's.
#include <QLineEdit>
#include <QtTest/QtTest>

#include <functional>

#include "base/config.h"
#include "ui/trainsettingsform.h"

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

class TestSettingsForm final : public QObject {
    Q_OBJECT

private Q_SLOTS:
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

QTEST_MAIN(TestSettingsForm)
#include "tst_settingsform.moc"
