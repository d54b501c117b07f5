// Copyright urlguard authors.
#include "protection_panel.h"

#include <QDateTime>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "protection.h"
#include "verifier.h"

namespace {

QString number(quint64 n)
{
    return QLocale().toString(n);
}

} // namespace

ProtectionPanel::ProtectionPanel(Protection *protection, Verifier *verifier, QWidget *parent)
    : QDockWidget(tr("urlguard protection"), parent), m_protection(protection)
{
    setObjectName(QStringLiteral("protectionPanel"));
    setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable
                | QDockWidget::DockWidgetClosable);

    auto *content = new QWidget(this);
    auto *layout = new QVBoxLayout(content);

    m_state = new QLabel(content);
    m_state->setObjectName(QStringLiteral("stateLabel"));
    m_state->setWordWrap(true);
    layout->addWidget(m_state);

    m_source = new QLabel(content);
    m_source->setObjectName(QStringLiteral("sourceLabel"));
    m_source->setWordWrap(true);
    m_source->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_source);

    m_lists = new QTreeWidget(content);
    m_lists->setObjectName(QStringLiteral("listsView"));
    m_lists->setRootIsDecorated(false);
    m_lists->setHeaderLabels({tr("List"), tr("Version"), tr("Entries"), tr("Age")});
    m_lists->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_lists->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_lists->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    m_lists->setMaximumHeight(m_lists->fontMetrics().height() * 9);
    layout->addWidget(m_lists);

    auto *countersBox = new QGroupBox(tr("This session"), content);
    auto *form = new QFormLayout(countersBox);
    m_lookups = addCounter(form, tr("Lookups"), QStringLiteral("lookups"));
    m_hits = addCounter(form, tr("List hits"), QStringLiteral("hits"));
    m_warnings = addCounter(form, tr("Warnings shown"), QStringLiteral("warnings"));
    m_blockedSubresources =
            addCounter(form, tr("Blocked subresources"), QStringLiteral("blockedSubresources"));
    m_blockedInvalid = addCounter(form, tr("Blocked invalid addresses"), QStringLiteral("blockedInvalid"));
    m_proceeds = addCounter(form, tr("Proceeded anyway"), QStringLiteral("proceeds"));
    m_allowedAfterProceed =
            addCounter(form, tr("Allowed after proceeding"), QStringLiteral("allowedAfterProceed"));
    layout->addWidget(countersBox);

    m_verification =
            new QLabel(tr("Verification: %1").arg(verifier ? verifier->description() : tr("none")), content);
    m_verification->setObjectName(QStringLiteral("verificationLabel"));
    m_verification->setWordWrap(true);
    layout->addWidget(m_verification);

    m_reloadButton = new QPushButton(tr("Reload lists"), content);
    m_reloadButton->setObjectName(QStringLiteral("reloadListsButton"));
    m_reloadButton->setToolTip(tr("Re-open the lists from disk (picks up a list another tool updated)"));
    connect(m_reloadButton, &QPushButton::clicked, this, &ProtectionPanel::reloadLists);
    layout->addWidget(m_reloadButton);

    m_reloadMessage = new QLabel(content);
    m_reloadMessage->setObjectName(QStringLiteral("reloadMessage"));
    m_reloadMessage->setWordWrap(true);
    layout->addWidget(m_reloadMessage);
    layout->addStretch();

    setWidget(content);

    if (m_protection)
        connect(m_protection, &Protection::listsChanged, this, &ProtectionPanel::refresh);
    m_timer = new QTimer(this);
    m_timer->setInterval(kRefreshIntervalMs);
    connect(m_timer, &QTimer::timeout, this, &ProtectionPanel::refresh);
    m_timer->start();
    refresh();
}

QLabel *ProtectionPanel::addCounter(QFormLayout *form, const QString &label, const QString &objectName)
{
    auto *value = new QLabel(QStringLiteral("0"));
    value->setObjectName(objectName);
    value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    form->addRow(label, value);
    return value;
}

QString ProtectionPanel::formatAge(qint64 seconds)
{
    if (seconds < 0)
        return tr("in the future");
    if (seconds < 60)
        return tr("%1 s").arg(seconds);
    const qint64 minutes = seconds / 60;
    if (minutes < 60)
        return tr("%1 min").arg(minutes);
    const qint64 hours = minutes / 60;
    if (hours < 24)
        return tr("%1 h %2 min").arg(hours).arg(minutes % 60);
    return tr("%1 d %2 h").arg(hours / 24).arg(hours % 24);
}

void ProtectionPanel::refresh()
{
    if (!m_protection)
        return;
    const auto &lists = m_protection->lists();
    if (m_protection->isProtecting()) {
        m_state->setText(lists.size() == 1 ? tr("<b>Protected</b> by 1 list")
                                           : tr("<b>Protected</b> by %1 lists").arg(lists.size()));
        m_state->setStyleSheet(QString());
    } else {
        m_state->setText(
                tr("<b>Not protected:</b> no lists are loaded (start with --data-dir or --snapshot)"));
        m_state->setStyleSheet(QStringLiteral("color: #a8201a;"));
    }
    m_source->setText(tr("Source: %1").arg(m_protection->source().describe()));
    m_reloadButton->setEnabled(m_protection->source().kind != ListSource::Kind::None);

    const qint64 now = QDateTime::currentSecsSinceEpoch();
    if (m_lists->topLevelItemCount() != static_cast<int>(lists.size())) {
        m_lists->clear();
        for (size_t i = 0; i < lists.size(); ++i)
            new QTreeWidgetItem(m_lists);
    }
    for (size_t i = 0; i < lists.size(); ++i) {
        const urlguard::ListInfo &info = lists[i];
        QTreeWidgetItem *item = m_lists->topLevelItem(static_cast<int>(i));
        item->setText(0, QString::fromStdString(info.name));
        item->setText(1, QString::number(info.version));
        item->setText(2, number(info.entries));
        item->setText(3, formatAge(now - info.created_unix));
        item->setToolTip(0, QString::fromStdString(info.path));
        item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
    }

    const ProtectionCounters &c = m_protection->counters();
    m_lookups->setText(number(c.lookups));
    m_hits->setText(number(c.hits));
    m_warnings->setText(number(c.warnings));
    m_blockedSubresources->setText(number(c.blockedSubresources));
    m_blockedInvalid->setText(number(c.blockedInvalid));
    m_proceeds->setText(number(c.proceeds));
    m_allowedAfterProceed->setText(number(c.allowedAfterProceed));
}

void ProtectionPanel::reloadLists()
{
    if (!m_protection)
        return;
    QString error;
    if (m_protection->reload(&error)) {
        m_reloadMessage->setText(tr("Lists reloaded at %1.").arg(QTime::currentTime().toString(Qt::ISODate)));
        m_reloadMessage->setStyleSheet(QString());
    } else {
        m_reloadMessage->setText(tr("Reload failed, the previous lists stay in use: %1").arg(error));
        m_reloadMessage->setStyleSheet(QStringLiteral("color: #a8201a;"));
    }
    refresh();
}
