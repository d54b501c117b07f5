// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "protection_panel.h"

#include <QDateTime>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <string>

#include "protection.h"
#include "verifier.h"

namespace {

const QString kErrorStyle = QStringLiteral("color: #a8201a;");

QString number(quint64 n)
{
    return QLocale().toString(n);
}

QString fromStd(const std::string &s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

// Columns of the lists view.
enum Column { kName = 0, kVersion, kEntries, kAge, kState, kColumnCount };

} // namespace

ProtectionPanel::ProtectionPanel(Protection *protection, Verifier *verifier, QWidget *parent)
    : QDockWidget(tr("urlguard protection"), parent), m_protection(protection), m_verifier(verifier)
{
    setObjectName(QStringLiteral("protectionPanel"));
    setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable
                | QDockWidget::DockWidgetClosable);

    auto *content = new QWidget;
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
    m_lists->setColumnCount(kColumnCount);
    m_lists->setHeaderLabels({tr("List"), tr("Version"), tr("Entries"), tr("Age"), tr("State")});
    m_lists->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_lists->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_lists->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    m_lists->setMaximumHeight(m_lists->fontMetrics().height() * 7);
    layout->addWidget(m_lists);

    m_staleWarning = new QLabel(content);
    m_staleWarning->setObjectName(QStringLiteral("staleWarning"));
    m_staleWarning->setWordWrap(true);
    m_staleWarning->setStyleSheet(kErrorStyle);
    m_staleWarning->hide();
    layout->addWidget(m_staleWarning);

    m_syncStatus = new QLabel(content);
    m_syncStatus->setObjectName(QStringLiteral("syncStatus"));
    m_syncStatus->setWordWrap(true);
    m_syncStatus->setTextFormat(Qt::PlainText);
    m_syncStatus->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_syncStatus);

    auto *buttons = new QHBoxLayout;
    m_syncButton = new QPushButton(tr("Sync now"), content);
    m_syncButton->setObjectName(QStringLiteral("syncNowButton"));
    connect(m_syncButton, &QPushButton::clicked, this, &ProtectionPanel::syncNow);
    buttons->addWidget(m_syncButton);
    m_reloadButton = new QPushButton(tr("Reload lists"), content);
    m_reloadButton->setObjectName(QStringLiteral("reloadListsButton"));
    m_reloadButton->setToolTip(tr("Pick up lists another tool updated on disk"));
    connect(m_reloadButton, &QPushButton::clicked, this, &ProtectionPanel::reloadLists);
    buttons->addWidget(m_reloadButton);
    layout->addLayout(buttons);

    m_syncMessage = new QLabel(content);
    m_syncMessage->setObjectName(QStringLiteral("syncMessage"));
    m_syncMessage->setWordWrap(true);
    m_syncMessage->setTextFormat(Qt::PlainText);
    m_syncMessage->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_syncMessage->hide(); // until a sync ran
    layout->addWidget(m_syncMessage);

    m_reloadMessage = new QLabel(content);
    m_reloadMessage->setObjectName(QStringLiteral("reloadMessage"));
    m_reloadMessage->setWordWrap(true);
    m_reloadMessage->hide(); // until there is something to say
    layout->addWidget(m_reloadMessage);

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
    m_verifiedFalsePositives =
            addCounter(form, tr("Verified false positives"), QStringLiteral("verifiedFalsePositives"));
    m_allowedAfterVerification =
            addCounter(form, tr("Allowed after verification"), QStringLiteral("allowedAfterVerification"));
    layout->addWidget(countersBox);

    m_verification = new QLabel(content);
    m_verification->setObjectName(QStringLiteral("verificationLabel"));
    m_verification->setWordWrap(true);
    layout->addWidget(m_verification);

    m_verificationBox = new QGroupBox(tr("Verification client"), content);
    auto *verificationForm = new QFormLayout(m_verificationBox);
    m_verifications = addCounter(verificationForm, tr("Verifications"), QStringLiteral("verifications"));
    m_verificationFailures =
            addCounter(verificationForm, tr("Failed verifications"), QStringLiteral("verificationFailures"));
    m_cacheHits = addCounter(verificationForm, tr("Cache hits"), QStringLiteral("cacheHits"));
    layout->addWidget(m_verificationBox);
    layout->addStretch();

    // The panel is taller than a small window: it scrolls rather than squeezing its parts.
    auto *scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("protectionPanelScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(content);
    setWidget(scroll);

    if (m_protection) {
        connect(m_protection, &Protection::listsChanged, this, &ProtectionPanel::refresh);
        connect(m_protection, &Protection::syncStarted, this, &ProtectionPanel::showSyncStarted);
        connect(m_protection, &Protection::syncFinished, this, &ProtectionPanel::showSyncResult);
    }
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
    const bool dataDirectory = m_protection->client() != nullptr;
    const std::vector<urlguard::ListStatus> lists = m_protection->listStatus();
    const int count = m_protection->listCount();

    if (m_protection->isProtecting()) {
        m_state->setText(count == 1 ? tr("<b>Protected</b> by 1 list")
                                    : tr("<b>Protected</b> by %1 lists").arg(count));
        m_state->setStyleSheet(QString());
    } else if (dataDirectory) {
        m_state->setText(
                m_protection->canSync()
                        ? tr("<b>Not protected yet:</b> no list is installed in the data directory. "
                             "Press Sync now.")
                        : tr("<b>Not protected yet:</b> no list is installed in the data directory "
                             "(run urlguardd, or start with --server and --public-key to sync here)."));
        m_state->setStyleSheet(kErrorStyle);
    } else {
        m_state->setText(
                tr("<b>Not protected:</b> no lists are loaded (start with --data-dir or --snapshot)"));
        m_state->setStyleSheet(kErrorStyle);
    }
    m_source->setText(tr("Source: %1").arg(m_protection->source().describe()));

    const qint64 now = QDateTime::currentSecsSinceEpoch();
    if (m_lists->topLevelItemCount() != static_cast<int>(lists.size())) {
        m_lists->clear();
        for (size_t i = 0; i < lists.size(); ++i)
            new QTreeWidgetItem(m_lists);
    }
    const std::vector<urlguard::ListInfo> &files = m_protection->lists();
    QStringList staleLines;
    QStringList syncLines;
    for (size_t i = 0; i < lists.size(); ++i) {
        const urlguard::ListStatus &list = lists[i];
        const QString name = fromStd(list.name);
        const bool installed = list.version > 0;
        QTreeWidgetItem *item = m_lists->topLevelItem(static_cast<int>(i));
        item->setText(kName, name);
        item->setText(kVersion, installed ? QString::number(list.version) : tr("none"));
        item->setText(kEntries, installed ? number(list.entries) : QString());
        item->setText(kAge, installed ? formatAge(now - list.created_unix) : QString());
        QString state = tr("offline");
        if (dataDirectory)
            state = !installed       ? tr("missing")
                    : list.stale     ? tr("stale")
                    : list.emergency ? tr("emergency")
                                     : tr("fresh");
        item->setText(kState, state);
        item->setForeground(kState, list.stale ? QBrush(QColor(0xa8, 0x20, 0x1a)) : QBrush());
        item->setToolTip(kName, i < files.size() ? fromStd(files[i].path) : QString());
        item->setTextAlignment(kVersion, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(kEntries, Qt::AlignRight | Qt::AlignVCenter);

        if (list.stale) {
            staleLines.append(!installed ? tr("%1 is not installed.").arg(name)
                                         : tr("%1 is past its signed expiry (%2 ago).")
                                                   .arg(name, formatAge(now - list.expires_unix)));
        }
        if (dataDirectory) {
            QString line;
            if (list.last_sync_result == urlguard::SyncResult::kNone) {
                line = tr("%1: not synced by this data directory's scheduler yet").arg(name);
            } else if (list.last_sync_result == urlguard::SyncResult::kFailed) {
                line = tr("%1: last sync failed %2 ago (%3 in a row): %4")
                               .arg(name, formatAge(now - list.last_sync_unix))
                               .arg(list.consecutive_failures)
                               .arg(fromStd(list.last_sync_error));
            } else {
                line = tr("%1: last sync %2 %3 ago")
                               .arg(name, QString::fromLatin1(urlguard::SyncResultName(list.last_sync_result)),
                                    formatAge(now - list.last_sync_unix));
            }
            if (list.next_sync_unix > 0) {
                line += list.next_sync_unix <= now
                        ? tr("; next sync due now")
                        : tr("; next sync in %1").arg(formatAge(list.next_sync_unix - now));
            }
            syncLines.append(line);
        }
    }
    if (staleLines.isEmpty()) {
        m_staleWarning->hide();
        m_staleWarning->clear();
    } else {
        m_staleWarning->setText(tr("<b>Lists out of date.</b> %1 A \"not listed\" answer is not confident "
                                   "until a sync succeeds.")
                                        .arg(staleLines.join(QLatin1Char(' ')).toHtmlEscaped()));
        m_staleWarning->show();
    }
    m_syncStatus->setVisible(dataDirectory && !syncLines.isEmpty());
    m_syncStatus->setText(syncLines.join(QLatin1Char('\n')));

    // Sync needs a data directory with a server and a key; one pass at a time.
    const bool syncing = m_protection->isSyncing();
    m_syncButton->setVisible(dataDirectory);
    m_syncButton->setEnabled(m_protection->canSync() && !syncing);
    m_syncButton->setText(syncing ? tr("Syncing...") : tr("Sync now"));
    const QString unavailable = m_protection->syncUnavailableReason();
    m_syncButton->setToolTip(unavailable.isEmpty() ? tr("Download list updates now (one sync pass)")
                                                   : unavailable);
    m_reloadButton->setEnabled(m_protection->source().kind != ListSource::Kind::None && !syncing);

    const ProtectionCounters &c = m_protection->counters();
    m_lookups->setText(number(c.lookups));
    m_hits->setText(number(c.hits));
    m_warnings->setText(number(c.warnings));
    m_blockedSubresources->setText(number(c.blockedSubresources));
    m_blockedInvalid->setText(number(c.blockedInvalid));
    m_proceeds->setText(number(c.proceeds));
    m_allowedAfterProceed->setText(number(c.allowedAfterProceed));
    m_verifiedFalsePositives->setText(number(c.verifiedFalsePositives));
    m_allowedAfterVerification->setText(number(c.allowedAfterVerification));

    m_verification->setText(tr("Verification: %1").arg(m_verifier ? m_verifier->description() : tr("none")));
    m_verificationBox->setVisible(dataDirectory);
    if (dataDirectory) {
        const urlguard::ClientStats stats = m_protection->clientStats();
        m_verifications->setText(number(stats.verifications));
        m_verificationFailures->setText(number(stats.verification_failures));
        m_cacheHits->setText(number(stats.cache_hits));
    }
}

void ProtectionPanel::reloadLists()
{
    m_reloadMessage->show();
    if (!m_protection)
        return;
    QString error;
    if (m_protection->reload(&error)) {
        m_reloadMessage->setText(tr("Lists reloaded at %1.").arg(QTime::currentTime().toString(Qt::ISODate)));
        m_reloadMessage->setStyleSheet(QString());
    } else {
        m_reloadMessage->setText(tr("Reload failed, the previous lists stay in use: %1").arg(error));
        m_reloadMessage->setStyleSheet(kErrorStyle);
    }
    refresh();
}

void ProtectionPanel::syncNow()
{
    if (m_protection)
        m_protection->startSync(); // the panel follows through syncStarted / syncFinished
}

void ProtectionPanel::showSyncStarted()
{
    m_syncMessage->show();
    m_syncMessage->setText(tr("Syncing..."));
    m_syncMessage->setStyleSheet(QString());
    refresh();
}

void ProtectionPanel::showSyncResult()
{
    if (!m_protection)
        return;
    const SyncRun &run = m_protection->lastSync();
    bool failed = !run.ok;
    for (const urlguard::SyncReport &r : run.reports)
        failed = failed || r.result == urlguard::SyncResult::kFailed;
    m_syncMessage->setText(
            tr("Sync at %1:\n%2")
                    .arg(run.finished.time().toString(Qt::ISODate), run.describe().join(QLatin1Char('\n'))));
    m_syncMessage->setStyleSheet(failed ? kErrorStyle : QString());
    refresh();
}
