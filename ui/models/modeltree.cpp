// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/modeltree.h"

#include <QCoreApplication>
#include <QHash>
#include <QHeaderView>
#include <QStyledItemDelegate>
#include <QTimer>
#include <QTreeWidget>

#include <algorithm>

#include "base/metricnames.h"

namespace d2dpo::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("ModelTree", text); }

/// A figure of `metrics` by name, "–" when it has none.
QString figureOf(const SampleMetrics& metrics, const std::string& name)
{
    for (const MetricValue& v : metrics.values)
        if (v.name == name)
            return QString::number(v.value, 'f', 4);
    return QStringLiteral("–");
}

/// The name column's rows, as tall as their wrapped text. QTreeView asks a delegate for a row's
/// height with no width to wrap in (it never supported word wrap there), so this one gives it the
/// column's width, less the indentation of the row's depth.
class WrappedNameDelegate final : public QStyledItemDelegate {
public:
    explicit WrappedNameDelegate(QTreeView* tree)
        : QStyledItemDelegate(tree)
        , m_tree(tree)
    {
    }

    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        int depth = m_tree->rootIsDecorated() ? 1 : 0;
        for (QModelIndex up = index.parent(); up.isValid(); up = up.parent())
            ++depth;
        QStyleOptionViewItem wrapped(option);
        wrapped.rect = QRect(0, 0, std::max(1, m_tree->columnWidth(index.column()) - depth * m_tree->indentation()),
                             QWIDGETSIZE_MAX);
        return QStyledItemDelegate::sizeHint(wrapped, index);
    }

private:
    QTreeView* m_tree;
};

} // namespace

void setUpModelTree(QTreeWidget* tree)
{
    tree->setHeaderLabels({tr("Model"), tr("Kind"), tr("Rule share"), tr("VSR"), tr("Created")});
    tree->headerItem()->setToolTip(kCreated, tr("When the model was made (UTC); each cell's tooltip has the year"));
    tree->headerItem()->setToolTip(kRule, tr("The share of samples the model's task's rule prefers; each cell's "
                                             "tooltip names the rule's metric and how the samples were drawn"));
    tree->headerItem()->setToolTip(kVsr, QString::fromStdString(metric::describe(metric::kVsr)));
    tree->setRootIsDecorated(true);
    // At 1024x640 the name column gets about 150 px, too few for "d2dpo run 12 best (step 250)":
    // a long name wraps onto more lines at its spaces, so a run's models read whole and apart. A
    // single word wider than the column loses its middle, not the end; the tooltip has it all.
    tree->setWordWrap(true);
    tree->setUniformRowHeights(false);
    tree->setItemDelegateForColumn(kName, new WrappedNameDelegate(tree));
    tree->setTextElideMode(Qt::ElideMiddle);
    // QTreeView sizes its rows once, at layout, not when a column's width changes later: the name
    // column stretches with the window, so its rows are laid out again then, once per burst of
    // resizes (a window dragged wider resizes the column at every step).
    auto* relayout = new QTimer(tree);
    relayout->setSingleShot(true);
    relayout->setInterval(0);
    QObject::connect(relayout, &QTimer::timeout, tree, [tree] { tree->doItemsLayout(); });
    QObject::connect(tree->header(), &QHeaderView::sectionResized, relayout,
                     [relayout](int section, int oldSize, int newSize) {
                         if (section == kName && oldSize != newSize)
                             relayout->start();
                     });
    tree->header()->setStretchLastSection(false);
    tree->header()->setSectionsMovable(false); // the name stays first: the delegate indents it
    tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    tree->header()->setSectionResizeMode(kName, QHeaderView::Stretch);
    tree->header()->setMinimumSectionSize(60);
}

QString fillModelTree(QTreeWidget* tree, const std::vector<ModelRecord>& models)
{
    QHash<QString, QTreeWidgetItem*> items;
    QHash<QString, bool> known;
    QString newestId, newestCreated;
    for (const ModelRecord& m : models) {
        known.insert(QString::fromStdString(m.id), true);
        if (newestId.isEmpty() || QString::fromStdString(m.createdAt) >= newestCreated) {
            newestId = QString::fromStdString(m.id);
            newestCreated = QString::fromStdString(m.createdAt);
        }
    }
    std::vector<ModelRecord> pending = models;
    while (!pending.empty()) {
        std::vector<ModelRecord> later;
        for (const ModelRecord& m : pending) {
            const QString parentId = QString::fromStdString(m.parentId);
            QTreeWidgetItem* parent = items.value(parentId);
            if (!parent && known.contains(parentId) && parentId != QString::fromStdString(m.id)) {
                later.push_back(m);
                continue;
            }
            auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree);
            item->setText(kName, QString::fromStdString(m.name));
            item->setText(kKind, QString::fromStdString(m.kind));
            const QString created =
                QString::fromStdString(m.createdAt).left(16).replace(QLatin1Char('T'), QLatin1Char(' '));
            item->setText(kCreated, created.mid(5)); // "11-27 11:37": the year is in the tooltip
            item->setToolTip(kCreated, created + tr(" UTC"));
            item->setData(kName, Qt::UserRole, QString::fromStdString(m.id));
            item->setToolTip(kName, tr("%1 (%2)").arg(QString::fromStdString(m.name), QString::fromStdString(m.id)));
            items.insert(QString::fromStdString(m.id), item);
        }
        if (later.size() == pending.size()) { // a cycle: show the rest as roots
            for (const ModelRecord& m : later)
                (new QTreeWidgetItem(tree))->setText(kName, QString::fromStdString(m.name));
            break;
        }
        pending = std::move(later);
    }
    tree->expandAll();
    return newestId;
}

void showModelFigures(QTreeWidgetItem* item, const std::optional<SampleMetrics>& metrics, const QString& source)
{
    const QString tip = metrics ? tr("%1 (%2)").arg(QString::fromStdString(metrics->provenance()), source) : QString();
    item->setText(kRule, metrics ? figureOf(*metrics, metrics->ruleMetric) : QStringLiteral("–"));
    item->setToolTip(kRule, metrics ? QString::fromStdString(metrics->ruleMetric) + QStringLiteral(": ") + tip : tip);
    item->setText(kVsr, metrics ? figureOf(*metrics, metric::kVsr) : QStringLiteral("–"));
    item->setToolTip(kVsr, tip);
}

} // namespace d2dpo::ui
