// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "protection.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QSet>
#include <QStringList>
#include <QThread>
#include <QTimer>
#include <QUrlQuery>
#include <string>
#include <string_view>
#include <utility>

#include "sync_runner.h"

namespace {

std::string toNativePath(const QString &path)
{
    const QByteArray encoded = QFile::encodeName(path);
    return std::string(encoded.constData(), static_cast<size_t>(encoded.size()));
}

QString fromStd(const std::string &s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace

Protection::Protection(QObject *parent) : QObject(parent)
{
    m_pollTimer = new QTimer(this);
    m_pollTimer->setInterval(kClientPollIntervalMs);
    connect(m_pollTimer, &QTimer::timeout, this, &Protection::pollClient);
    m_sync = new SyncRunner(this);
    connect(m_sync, &SyncRunner::finished, this, &Protection::finishSync);
}

Protection::~Protection() = default;

bool Protection::setSource(const ListSource &source, QString *error)
{
    if (m_sync->isRunning()) {
        // The sync writes into the current data directory and reports about it: let it finish first.
        if (error)
            *error = tr("a sync is running");
        return false;
    }
    if (source.kind == ListSource::Kind::None) {
        m_source = source;
        m_checker.reset();
        m_lists.clear();
        m_client.reset();
        m_pollTimer->stop();
        emit listsChanged();
        return true;
    }
    if (source.kind == ListSource::Kind::DataDirectory) {
        std::shared_ptr<urlguard::Client> client = openDataDirectoryClient(source.client, error);
        if (!client)
            return false;
        m_source = source;
        m_checker.reset();
        m_lists.clear();
        m_client = std::move(client);
        m_sync->clear();
        m_clientGenerationKnown = false;
        m_pollTimer->start();
        pollClient(); // emits listsChanged
        return true;
    }

    urlguard::Result<std::unique_ptr<urlguard::Checker>> opened =
            urlguard::Status::InvalidArgument("no list source");
    if (source.kind == ListSource::Kind::SnapshotDirectory) {
        opened = urlguard::Checker::OpenDirectory(toNativePath(source.directory));
    } else {
        std::vector<std::string> paths;
        for (const QString &path : source.snapshots)
            paths.push_back(toNativePath(path));
        opened = urlguard::Checker::Open(paths);
    }
    if (!opened.ok()) {
        if (error)
            *error = fromStd(opened.status().ToString());
        return false;
    }
    m_source = source;
    m_checker = std::shared_ptr<const urlguard::Checker>(std::move(opened).value());
    m_lists = m_checker->Lists();
    m_client.reset();
    m_pollTimer->stop();
    emit listsChanged();
    return true;
}

bool Protection::reload(QString *error)
{
    if (m_source.kind == ListSource::Kind::DataDirectory && m_client) {
        const urlguard::Status refreshed = m_client->Refresh();
        if (!refreshed.ok()) {
            if (error)
                *error = fromStd(refreshed.ToString());
            return false;
        }
        m_clientGenerationKnown = false;
        pollClient();
        return true;
    }
    return setSource(m_source, error);
}

bool Protection::isProtecting() const
{
    return m_checker != nullptr || (m_client != nullptr && m_clientListCount > 0);
}

int Protection::listCount() const
{
    return m_client ? m_clientListCount : static_cast<int>(m_lists.size());
}

std::vector<urlguard::ListStatus> Protection::listStatus() const
{
    if (m_client)
        return m_client->Lists();
    std::vector<urlguard::ListStatus> out;
    for (const urlguard::ListInfo &info : m_lists) {
        urlguard::ListStatus st;
        st.name = info.name;
        st.version = info.version;
        st.entries = info.entries;
        st.created_unix = info.created_unix;
        out.push_back(std::move(st)); // snapshot files carry no expiry and no sync schedule
    }
    return out;
}

urlguard::ClientStats Protection::clientStats() const
{
    return m_client ? m_client->Stats() : urlguard::ClientStats();
}

void Protection::pollClient()
{
    if (!m_client)
        return;
    const quint64 generation = m_client->Stats().generation;
    if (m_clientGenerationKnown && generation == m_clientGeneration)
        return;
    m_clientGeneration = generation;
    m_clientGenerationKnown = true;
    int installed = 0;
    for (const urlguard::ListStatus &list : m_client->Lists()) {
        if (list.version > 0)
            ++installed;
    }
    m_clientListCount = installed;
    emit listsChanged();
}

bool Protection::canSync() const
{
    return syncUnavailableReason().isEmpty();
}

QString Protection::syncUnavailableReason() const
{
    if (!m_client)
        return tr("Sync needs a data directory (--data-dir)");
    if (m_source.client.server_url.empty())
        return tr("No update server is configured (--server)");
    if (m_source.client.public_key_pems.empty())
        return tr("No trusted publisher key is configured (--public-key)");
    return QString();
}

bool Protection::isSyncing() const
{
    return m_sync->isRunning();
}

const SyncRun &Protection::lastSync() const
{
    return m_sync->last();
}

bool Protection::startSync()
{
    if (m_sync->isRunning() || !canSync())
        return false;
    // The runner's worker holds its own reference, so the client outlives the pass even after a source
    // change.
    if (!m_sync->start(m_client))
        return false;
    emit syncStarted();
    return true;
}

void Protection::finishSync()
{
    ++m_counters.syncs;
    // SyncNow swapped the new generation in before it returned.
    m_clientGenerationKnown = false;
    pollClient();
    emit syncFinished();
}

bool Protection::isInternalScheme(const QString &scheme)
{
    // The browser's own schemes: they are served inside the browser and never reach the network, and most
    // have no host, so urlguard would call them invalid.
    static const QSet<QString> kInternal = {
            QStringLiteral("about"),
            QStringLiteral("blob"),
            QStringLiteral("chrome"),
            QStringLiteral("chrome-error"),
            QStringLiteral("chrome-extension"),
            QStringLiteral("chrome-untrusted"),
            QStringLiteral("data"),
            QStringLiteral("devtools"),
            QStringLiteral("file"),
            QStringLiteral("filesystem"),
            QStringLiteral("qrc"),
            QLatin1String(kUrlGuardScheme),
            QStringLiteral("view-source"),
    };
    return kInternal.contains(scheme.toLower());
}

urlguard::Verdict Protection::lookup(const QUrl &url) const
{
    const QByteArray spelled = url.toEncoded();
    const std::string_view view(spelled.constData(), static_cast<size_t>(spelled.size()));
    if (m_checker)
        return m_checker->Check(view);
    if (m_client)
        return m_client->CheckLocal(view); // local only: no cache, no network, never waits
    return urlguard::Verdict();
}

Protection::Decision Protection::decide(const QUrl &url, bool mainFrame, const QUrl &firstPartyUrl)
{
    Q_ASSERT(QThread::currentThread() == thread());
    Decision d;
    if (isInternalScheme(url.scheme()))
        return d;
    if (!m_checker && !m_client) {
        d.summary = tr("Not protected: no lists are loaded");
        if (mainFrame)
            emit mainFrameChecked(url, d.summary);
        return d;
    }

    // The hot path: one local lookup, no I/O, nothing that waits.
    const urlguard::Verdict verdict = lookup(url);
    ++m_counters.lookups;
    d.checked = true;
    d.verdict = verdict.kind;

    // A local lookup answers kSafe, kHit or kInvalid; the other kinds come from Client::Check, which verifies
    // (the warning page does that), and are treated the way urlguard::IsThreat says.
    const int lists = listCount();
    if (urlguard::IsThreat(verdict.kind)) {
        ++m_counters.hits;
        const QString pageKey = mainFrame ? urlKey(url) : urlKey(firstPartyUrl);
        if (const SessionExemptions::Exemption *exemption = m_exemptions.covering(pageKey, verdict)) {
            if (exemption->proceeded) {
                ++m_counters.allowedAfterProceed;
                d.summary = tr("Listed (%1), opened because you chose to proceed").arg(summarize(verdict));
            } else {
                ++m_counters.allowedAfterVerification;
                d.summary = tr("Local match (%1) opened: verification showed a filter false positive")
                                    .arg(summarize(verdict));
            }
        } else if (mainFrame) {
            ++m_counters.warnings;
            d.action = Action::ShowWarning;
            d.redirectUrl = warningUrl(url);
            d.summary = tr("Warning: listed (%1)").arg(summarize(verdict));
        } else {
            ++m_counters.blockedSubresources;
            d.action = Action::Block;
            d.summary = tr("Blocked a listed resource (%1)").arg(summarize(verdict));
        }
    } else if (verdict.kind == urlguard::VerdictKind::kInvalid) {
        // Not a valid address: it has no canonical form, so it cannot be checked, and it never reaches the
        // network.
        ++m_counters.blockedInvalid;
        d.summary = tr("Blocked: not a valid address (%1)").arg(fromStd(verdict.error));
        if (mainFrame) {
            d.action = Action::ShowWarning;
            d.redirectUrl = warningUrl(url);
        } else {
            d.action = Action::Block;
        }
    } else { // kSafe, kSafeVerified
        if (verdict.stale && m_client && lists == 0)
            d.summary = tr("Not protected: no lists are installed yet (Sync now)");
        else if (verdict.stale)
            d.summary = tr("Not listed, but a list is past its expiry: sync to be sure");
        else if (lists == 1)
            d.summary = tr("Checked against 1 list: not listed");
        else
            d.summary = tr("Checked against %1 lists: not listed").arg(lists);
    }
    if (mainFrame)
        emit mainFrameChecked(url, d.summary);
    return d;
}

QUrl Protection::warningUrl(const QUrl &url)
{
    QUrl page;
    page.setScheme(QLatin1String(kUrlGuardScheme));
    page.setPath(QStringLiteral("warning"));
    // Every reserved character of the URL is escaped, so the value survives the query intact.
    page.setQuery(QStringLiteral("url=")
                  + QString::fromLatin1(QUrl::toPercentEncoding(QString::fromLatin1(url.toEncoded()))));
    return page;
}

QString Protection::issueProceedToken(const QUrl &url, const urlguard::Verdict &verdict)
{
    return m_exemptions.issueProceedToken(url, verdict);
}

QUrl Protection::redeemProceedToken(const QString &token)
{
    const std::optional<QUrl> url = m_exemptions.redeemProceedToken(token);
    if (!url)
        return QUrl();
    ++m_counters.proceeds;
    return *url;
}

void Protection::exemptVerifiedFalsePositive(const QUrl &url, const urlguard::Verdict &verdict)
{
    m_exemptions.exemptVerified(url, verdict);
    ++m_counters.verifiedFalsePositives;
}

bool Protection::isExempt(const QUrl &url) const
{
    return m_exemptions.isExempt(url);
}

bool Protection::exemptionCovers(const QUrl &pageUrl, const urlguard::Verdict &verdict) const
{
    return m_exemptions.covering(urlKey(pageUrl), verdict) != nullptr;
}

QString Protection::summarize(const urlguard::Verdict &verdict) const
{
    QStringList parts;
    for (const urlguard::Match &m : verdict.matches)
        parts.append(QStringLiteral("%1: %2").arg(fromStd(m.list), fromStd(m.expression)));
    return parts.join(QStringLiteral(", "));
}
