// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/train/trainsettingsform.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "base/memoryestimate.h"
#include "facades/runtimeinfo.h"

namespace d2dpo::ui {

namespace {

/// Numbers are read the same way in every locale ("1e-4", "0.1").
std::optional<double> parseReal(const QLineEdit* field)
{
    bool ok = false;
    const double value = QLocale::c().toDouble(field->text().trimmed(), &ok);
    return ok && std::isfinite(value) ? std::optional(value) : std::nullopt;
}

std::optional<qlonglong> parseInteger(const QLineEdit* field)
{
    bool ok = false;
    const qlonglong value = QLocale::c().toLongLong(field->text().trimmed(), &ok);
    return ok ? std::optional(value) : std::nullopt;
}

QString number(double value) { return QLocale::c().toString(value, 'g', 6); }

void markField(QLineEdit* field, bool bad)
{
    field->setProperty("invalid", bad);
    field->setStyleSheet(bad ? QStringLiteral("QLineEdit { background: #fde2e1; }") : QString());
}

} // namespace

TrainSettingsForm::TrainSettingsForm(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_form = new QFormLayout;
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    layout->addLayout(m_form);

    m_beta = addField(QStringLiteral("beta"), tr("Beta"),
                      tr("Strength of the pull towards the reference: the implicit reward is beta times the "
                         "divergence. > 0; the paper uses 0.1."));
    m_eta = addField(QStringLiteral("eta"), tr("Eta (remasking)"),
                     tr("Reverse-time remasking coefficient used in the loss and for sampling. 0 = pure "
                        "unmasking, as in the paper."));
    m_learningRate = addField(QStringLiteral("learningRate"), tr("Learning rate"), tr("Adam's step size, in (0, 1]."));
    m_batch = addField(QStringLiteral("batch"), tr("Batch (pairs)"), tr("Preference pairs per step."));
    m_batchPiece = addField(QStringLiteral("batchPiece"), tr("Pairs per pass"),
                            tr("A step runs its batch in pieces of this many pairs and adds up their gradients: the "
                               "same update with one piece's activations in memory. 0 = the whole batch at once."));
    m_loraRank = addField(QStringLiteral("loraRank"), tr("Adapters' rank"),
                          tr("For a model brought in as TorchScript: train low-rank adapters of this rank (each weight "
                             "matrix W becomes W + B A, only A and B learn; far less memory) instead of every "
                             "weight. 0 = every weight."));
    {
        QStringList values, labels;
        for (const std::string& name : precisionNames()) {
            values << QString::fromStdString(name);
            labels << (precisionFromName(name) == Precision::BFloat16 ? tr("bf16 products") : tr("Float32"));
        }
        m_precision = addChoice(QStringLiteral("precision"), tr("Matrix products"),
                                tr("bf16: each step's matrix products take bfloat16 operands with float32 sums, about "
                                   "twice as fast on a processor with bf16 units; the weights, Adam and the loss stay "
                                   "float32, and evaluations sample at float32. Its cost on quality: "
                                   "docs/benchmarks.md."),
                                values, labels);
    }
    m_steps = addField(QStringLiteral("steps"), tr("Steps"), tr("Optimisation steps."));
    m_tSamples = addField(QStringLiteral("tSamples"), tr("t-samples per pair"),
                          tr("Independent (t, x_t) draws per pair in one step, each its own loss term."));
    m_vrpoSamples = addField(QStringLiteral("vrpoSamples"), tr("VRPO samples"),
                             tr("Draws per pair whose divergences are averaged inside the log-sigmoid (LLaDA 1.5's "
                                "VRPO): lower variance of the margin."));
    m_tSampling = addChoice(QStringLiteral("tSampling"), tr("Times t"),
                            tr("Independent: one uniform t per draw. Stratified: t_i = (u + i)/B mod 1 across the "
                               "batch, one draw per stratum."),
                            {QStringLiteral("independent"), QStringLiteral("stratified")},
                            {tr("Independent"), tr("Stratified")});
    m_maskCoupling = addChoice(QStringLiteral("maskCoupling"), tr("Masks"),
                               tr("Shared t: winner and loser share t (the paper). Complementary: each draw also gets "
                                  "its complement at 1 - t, so every position is read exactly once."),
                               {QStringLiteral("shared-t"), QStringLiteral("complementary")},
                               {tr("Shared t"), tr("Complementary")});
    m_lossType = addChoice(QStringLiteral("lossType"), tr("Loss"),
                           tr("On the margin h = D_w - D_l, as TRL names them: sigmoid (the paper), IPO, hinge, "
                              "robust DPO."),
                           {QStringLiteral("sigmoid"), QStringLiteral("ipo"), QStringLiteral("hinge"),
                            QStringLiteral("robust")},
                           {tr("Sigmoid (paper)"), tr("IPO"), tr("Hinge"), tr("Robust")});
    m_labelSmoothing = addField(QStringLiteral("labelSmoothing"), tr("Label smoothing"),
                                tr("Sigmoid: conservative DPO's smoothing. Robust: the assumed rate of flipped labels. "
                                   "In [0, 0.5)."));
    m_rpoAlpha = addField(QStringLiteral("rpoAlpha"), tr("Winner cross-entropy"),
                          tr("Weight of the winners' masked cross-entropy added to the loss (TRL's rpo_alpha), "
                             "against collapse. 0 = off."));
    m_keepBest = addChoice(QStringLiteral("keepBest"), tr("Keep best"),
                           tr("Also keep best.d2dpo: the evaluation with the highest rule share whose VSR is at most "
                              "0.01 below the reference's."),
                           {QString(), QStringLiteral("rule")}, {tr("No"), tr("By the rule's share")});
    m_evalEvery = addField(QStringLiteral("evalEvery"), tr("Evaluate every"),
                           tr("Steps between evaluations (the task's metrics); 0 = only at the end."));
    m_evalSamples = addField(QStringLiteral("evalSamples"), tr("Evaluation samples"),
                             tr("Sequences drawn per evaluation. auto: as many as fit in about %1 s at the "
                                "reference's cost (one pass is timed when the run starts), at most %2; the run "
                                "records the count.")
                                 .arg(kMeasurementSeconds)
                                 .arg(kMeasurementSamples));
    m_sampler = addChoice(QStringLiteral("sampler"), tr("Sampler"),
                          tr("Exact: the continuous-time reverse process, one position per pass (a fine Euler step "
                             "where there is no exact sampler). Euler: the sampling steps below. Confident: the "
                             "sampling steps below as passes, each keeping the draws the model is surest of (fast, "
                             "not the model's exact distribution; masking noise without remasking only)."),
                          {QStringLiteral("exact"), QStringLiteral("euler"), QStringLiteral("confident")},
                          {tr("Exact"), tr("Euler"), tr("Confident (fast)")});
    m_samplingSteps = addField(QStringLiteral("samplingSteps"), tr("Sampling steps"),
                               tr("Passes per generated sequence (the Euler and confident samplers)."));
    m_seed = addField(QStringLiteral("seed"), tr("Seed"), tr("Makes a run repeatable."));
    m_device = new QComboBox(this);
    m_device->setObjectName(QStringLiteral("device"));
    m_device->addItem(tr("Auto (GPU when there is one)"), QStringLiteral("auto"));
    m_device->addItem(tr("CPU"), QStringLiteral("cpu"));
    m_device->addItem(cudaAvailable() ? tr("CUDA GPU") : tr("CUDA GPU (none found)"), QStringLiteral("cuda"));
    m_device->setToolTip(QString::fromStdString(describeAutoRuntime()));
    connect(m_device, &QComboBox::currentIndexChanged, this, &TrainSettingsForm::revalidate);
    m_form->addRow(tr("Device"), m_device);

    m_problemLabel = new QLabel(this);
    m_problemLabel->setObjectName(QStringLiteral("problems"));
    m_problemLabel->setWordWrap(true);
    m_problemLabel->setStyleSheet(QStringLiteral("color: #b3261e;"));
    layout->addWidget(m_problemLabel);
    auto* defaults = new QPushButton(tr("Restore defaults"), this);
    connect(defaults, &QPushButton::clicked, this, &TrainSettingsForm::restoreDefaults);
    layout->addWidget(defaults, 0, Qt::AlignLeft);

    restoreDefaults();
}

QLineEdit* TrainSettingsForm::addField(const QString& key, const QString& label, const QString& tip)
{
    auto* field = new QLineEdit(this);
    field->setObjectName(key);
    field->setToolTip(tip);
    field->setMaximumWidth(120);
    connect(field, &QLineEdit::textChanged, this, &TrainSettingsForm::revalidate);
    m_form->addRow(label, field);
    return field;
}

QComboBox* TrainSettingsForm::addChoice(const QString& key, const QString& label, const QString& tip,
                                        const QStringList& values, const QStringList& labels)
{
    auto* box = new QComboBox(this);
    box->setObjectName(key);
    box->setToolTip(tip);
    box->setAccessibleName(label);
    for (int i = 0; i < values.size(); ++i)
        box->addItem(labels.value(i), values[i]);
    connect(box, &QComboBox::currentIndexChanged, this, &TrainSettingsForm::revalidate);
    m_form->addRow(label, box);
    return box;
}

void TrainSettingsForm::setValues(const TrainSettings& v)
{
    const QSignalBlocker blockDevice(m_device);
    const auto choose = [](QComboBox* box, const std::string& value) {
        const QSignalBlocker block(box);
        box->setCurrentIndex(std::max(0, box->findData(QString::fromStdString(value))));
    };
    choose(m_tSampling, v.dpo.tSampling);
    choose(m_precision, std::string(precisionName(v.dpo.precision)));
    choose(m_maskCoupling, v.dpo.maskCoupling);
    choose(m_lossType, v.dpo.lossType);
    choose(m_keepBest, v.schedule.keepBest);
    choose(m_sampler, v.sampling.sampler);
    m_vrpoSamples->setText(QString::number(v.dpo.vrpoSamples));
    m_labelSmoothing->setText(number(v.dpo.labelSmoothing));
    m_rpoAlpha->setText(number(v.dpo.rpoAlpha));
    m_beta->setText(number(v.dpo.beta));
    m_eta->setText(number(v.eta));
    m_learningRate->setText(number(v.dpo.learningRate));
    m_batch->setText(QString::number(v.dpo.batch));
    m_batchPiece->setText(QString::number(v.dpo.batchPiece));
    m_loraRank->setText(QString::number(v.dpo.loraRank));
    m_steps->setText(QString::number(v.dpo.steps));
    m_tSamples->setText(QString::number(v.dpo.tSamplesPerPair));
    m_evalEvery->setText(QString::number(v.schedule.evalEvery));
    m_evalSamples->setText(v.evalSeconds > 0 ? QStringLiteral("auto") : QString::number(v.schedule.evalSamples));
    m_samplingSteps->setText(QString::number(v.sampling.steps));
    m_seed->setText(QString::number(v.seed));
    m_device->setCurrentIndex(std::max(0, m_device->findData(v.device)));
    revalidate();
}

void TrainSettingsForm::restoreDefaults() { setValues(TrainSettings{}); }

void TrainSettingsForm::setModelSpec(const std::optional<ModelSpec>& spec)
{
    m_spec = spec;
    revalidate();
}

void TrainSettingsForm::setAvailableMemoryOverride(int64_t bytes)
{
    m_memoryOverride = bytes;
    revalidate();
}

std::optional<TrainSettings> TrainSettingsForm::settings() const { return m_settings; }

void TrainSettingsForm::revalidate()
{
    QStringList problems;
    TrainSettings s;
    // The form reads the text; the limits and their words are core's (config.h's problems()), so
    // the form and `d2dpo train` refuse the same values with the same sentence.
    auto real = [&](QLineEdit* field, const QString& name, double& out) {
        const auto value = parseReal(field);
        markField(field, !value);
        if (!value)
            problems << tr("%1: \"%2\" is not a number.").arg(name, field->text());
        else
            out = *value;
    };
    auto integer = [&](QLineEdit* field, const QString& name, auto& out) {
        using Out = std::decay_t<decltype(out)>;
        const auto value = parseInteger(field);
        markField(field, !value);
        if (!value)
            problems << tr("%1: \"%2\" is not a whole number.").arg(name, field->text());
        else // beyond the type's range: clamped, so core names the limits
            out = Out(std::clamp<qlonglong>(*value, qlonglong(std::numeric_limits<Out>::min()),
                                            qlonglong(std::numeric_limits<Out>::max())));
    };
    real(m_beta, tr("Beta"), s.dpo.beta);
    real(m_eta, tr("Eta"), s.eta);
    real(m_learningRate, tr("Learning rate"), s.dpo.learningRate);
    integer(m_batch, tr("Batch"), s.dpo.batch);
    integer(m_batchPiece, tr("Pairs per pass"), s.dpo.batchPiece);
    integer(m_loraRank, tr("Adapters' rank"), s.dpo.loraRank);
    integer(m_steps, tr("Steps"), s.dpo.steps);
    integer(m_tSamples, tr("t-samples per pair"), s.dpo.tSamplesPerPair);
    integer(m_vrpoSamples, tr("VRPO samples"), s.dpo.vrpoSamples);
    real(m_labelSmoothing, tr("Label smoothing"), s.dpo.labelSmoothing);
    real(m_rpoAlpha, tr("Winner cross-entropy"), s.dpo.rpoAlpha);
    s.dpo.tSampling = m_tSampling->currentData().toString().toStdString();
    s.dpo.precision = precisionFromName(m_precision->currentData().toString().toStdString()).value_or(Precision::Float32);
    s.dpo.maskCoupling = m_maskCoupling->currentData().toString().toStdString();
    s.dpo.lossType = m_lossType->currentData().toString().toStdString();
    s.schedule.keepBest = m_keepBest->currentData().toString().toStdString();
    s.sampling.sampler = m_sampler->currentData().toString().toStdString();
    integer(m_evalEvery, tr("Evaluate every"), s.schedule.evalEvery);
    if (m_evalSamples->text().trimmed().compare(QLatin1String("auto"), Qt::CaseInsensitive) == 0) {
        markField(m_evalSamples, false);
        s.schedule.evalSamples = int(kMeasurementSamples);
        s.evalSeconds = kMeasurementSeconds;
    } else {
        integer(m_evalSamples, tr("Evaluation samples"), s.schedule.evalSamples);
        s.evalSeconds = 0;
    }
    integer(m_samplingSteps, tr("Sampling steps"), s.sampling.steps);
    qlonglong seed = 0;
    integer(m_seed, tr("Seed"), seed);
    if (seed < 0) {
        problems << tr("Seed must be 0 or more.");
        markField(m_seed, true);
    }
    s.seed = uint64_t(std::max<qlonglong>(seed, 0));
    s.device = m_device->currentData().toString();
    if (s.device == QLatin1String("cuda") && !cudaAvailable())
        problems << tr("No CUDA GPU is available on this machine; choose Auto or CPU.");
    s.sampling.batch = std::min(s.schedule.evalSamples, 1000);
    const std::map<std::string, QLineEdit*> fields = {
        {"beta", m_beta},           {"learning_rate", m_learningRate},   {"batch", m_batch},
        {"batch_piece", m_batchPiece}, {"lora_rank", m_loraRank},
        {"steps", m_steps},         {"t_samples_per_pair", m_tSamples},  {"vrpo_samples", m_vrpoSamples},
        {"label_smoothing", m_labelSmoothing}, {"rpo_alpha", m_rpoAlpha}, {"eval_every", m_evalEvery},
        {"eval_samples", m_evalSamples}, {"eta", m_eta}};
    const auto report = [&](const std::vector<ConfigProblem>& found, QLineEdit* onlyField = nullptr) {
        for (const ConfigProblem& p : found) {
            QLineEdit* field = onlyField;
            if (!field) {
                const auto known = fields.find(p.setting);
                field = known == fields.end() ? nullptr : known->second;
            }
            if (field && field->property("invalid").toBool())
                continue; // its text is not a number: said already
            if (field)
                markField(field, true);
            problems << QString::fromStdString(p.message);
        }
    };
    report(d2dpo::problems(s.dpo));
    report(d2dpo::problems(s.schedule));
    NoiseConfig noise;
    noise.eta = s.eta;
    report(d2dpo::problems(noise));
    std::vector<ConfigProblem> sampling = d2dpo::problems(s.sampling);
    std::erase_if(sampling, [](const ConfigProblem& p) { return p.setting != "steps"; }); // the rest is chosen
    report(sampling, m_samplingSteps);

    if (s.dpo.loraRank > 0 && m_spec && !m_spec->model.isBroughtIn()) {
        problems << tr("Adapters are for models brought in: set their rank to 0 to train this model.");
        markField(m_loraRank, true);
    }
    if (problems.isEmpty() && m_spec) {
        const int64_t available = m_memoryOverride >= 0 ? m_memoryOverride : availableHostMemoryBytes();
        if (Status fits = checkFitsInMemory(*m_spec, s.dpo, s.sampling, available); !fits) {
            problems << QString::fromStdString(fits.error()) + QLatin1Char('.');
            markField(m_batch, true);
            markField(m_batchPiece, true);
        }
    }
    m_problems = problems;
    m_settings = problems.isEmpty() ? std::optional(s) : std::nullopt;
    m_problemLabel->setText(problems.join(QLatin1Char('\n')));
    m_problemLabel->setVisible(!problems.isEmpty());
    if (m_valid != problems.isEmpty()) {
        m_valid = problems.isEmpty();
        Q_EMIT validityChanged(m_valid);
    }
}

void TrainSettingsForm::loadSettings()
{
    QSettings q;
    q.beginGroup(QStringLiteral("train"));
    const QList<QLineEdit*> fields = findChildren<QLineEdit*>();
    for (QLineEdit* field : fields)
        if (q.contains(field->objectName()))
            field->setText(q.value(field->objectName()).toString());
    const QList<QComboBox*> choices = findChildren<QComboBox*>();
    for (QComboBox* box : choices)
        if (q.contains(box->objectName()))
            box->setCurrentIndex(std::max(0, box->findData(q.value(box->objectName()))));
    q.endGroup();
    revalidate();
}

void TrainSettingsForm::saveSettings() const
{
    QSettings q;
    q.beginGroup(QStringLiteral("train"));
    const QList<QLineEdit*> fields = findChildren<QLineEdit*>();
    for (QLineEdit* field : fields)
        q.setValue(field->objectName(), field->text());
    const QList<QComboBox*> choices = findChildren<QComboBox*>();
    for (QComboBox* box : choices)
        q.setValue(box->objectName(), box->currentData());
    q.endGroup();
}

} // namespace d2dpo::ui
