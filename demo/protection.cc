// Copyright urlguard authors.
#include "protection.h"

#include <QFile>
#include <QRandomGenerator>
#include <QThread>
#include <QUrlQuery>
#include <string>
#include <string_view>

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

QString ListSource::describe() const
{
    switch (kind) {
    case Kind::None:
        return QObject::tr("none");
    case Kind::Directory:
        return QObject::tr("directory %1").arg(directory);
    case Kind::Files:
        return snapshots.size() == 1 ? QObject::tr("snapshot %1").arg(snapshots.first())
                                     : QObject::tr("%1 snapshot files").arg(snapshots.size());
    }
    return QString();
}

Protection::Protection(QObject *parent) : QObject(parent) { }

Protection::~Protection() = default;

bool Protection::setSource(const ListSource &source, QString *error)
{
    if (source.kind == ListSource::Kind::None) {
        m_source = source;
        m_checker.reset();
        m_lists.clear();
        emit listsChanged();
        return true;
    }

    urlguard::Result<std::unique_ptr<urlguard::Checker>> opened =
            urlguard::Status::InvalidArgument("no list source");
    if (source.kind == ListSource::Kind::Directory) {
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
    emit listsChanged();
    return true;
}

bool Protection::reload(QString *error)
{
    return setSource(m_source, error);
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
    if (!m_checker)
        return urlguard::Verdict();
    const QByteArray spelled = url.toEncoded();
    return m_checker->Check(std::string_view(spelled.constData(), static_cast<size_t>(spelled.size())));
}

Protection::Decision Protection::decide(const QUrl &url, bool mainFrame, const QUrl &firstPartyUrl)
{
    Q_ASSERT(QThread::currentThread() == thread());
    Decision d;
    if (isInternalScheme(url.scheme()))
        return d;
    if (!m_checker) {
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

    // Checker (a local lookup) answers kSafe, kHit or kInvalid; the other kinds come from urlguard::Client,
    // which verifies, and are mapped the way the browser would treat them.
    switch (verdict.kind) {
    case urlguard::VerdictKind::kSafe:
    case urlguard::VerdictKind::kSafeVerified:
        d.summary = m_lists.size() == 1 ? tr("Checked against 1 list: not listed")
                                        : tr("Checked against %1 lists: not listed").arg(m_lists.size());
        break;
    case urlguard::VerdictKind::kInvalid:
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
        break;
    case urlguard::VerdictKind::kHit:
    case urlguard::VerdictKind::kMalicious:
    case urlguard::VerdictKind::kUnverifiedHit: {
        ++m_counters.hits;
        const QString pageKey = mainFrame ? urlKey(url) : urlKey(firstPartyUrl);
        if (exemptCovers(pageKey, verdict)) {
            ++m_counters.allowedAfterProceed;
            d.summary = tr("Listed (%1), opened because you chose to proceed").arg(summarize(verdict));
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
        break;
    }
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

QString Protection::urlKey(const QUrl &url)
{
    return url.adjusted(QUrl::RemoveFragment).toString(QUrl::FullyEncoded);
}

QSet<QString> Protection::matchKeys(const urlguard::Verdict &verdict)
{
    QSet<QString> keys;
    for (const urlguard::Match &m : verdict.matches)
        keys.insert(fromStd(m.list) + QLatin1Char('\n') + fromStd(m.expression));
    return keys;
}

QString Protection::issueProceedToken(const QUrl &url, const urlguard::Verdict &verdict)
{
    while (m_tokenOrder.size() >= kMaxPendingTokens)
        m_pendingTokens.remove(m_tokenOrder.takeFirst());
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    const QString token =
            QString::fromLatin1(QByteArray(reinterpret_cast<const char *>(words), sizeof(words)).toHex());
    m_pendingTokens.insert(token, PendingProceed {url, matchKeys(verdict)});
    m_tokenOrder.append(token);
    return token;
}

QUrl Protection::redeemProceedToken(const QString &token)
{
    const auto it = m_pendingTokens.constFind(token);
    if (it == m_pendingTokens.cend())
        return QUrl();
    const PendingProceed pending = it.value();
    m_pendingTokens.erase(it);
    m_tokenOrder.removeOne(token);
    exempt(pending.url, pending.matches);
    ++m_counters.proceeds;
    return pending.url;
}

void Protection::exemptVerifiedFalsePositive(const QUrl &url, const urlguard::Verdict &verdict)
{
    exempt(url, matchKeys(verdict));
    ++m_counters.verifiedFalsePositives;
}

void Protection::exempt(const QUrl &url, const QSet<QString> &matches)
{
    const QString key = urlKey(url);
    if (!m_exempt.contains(key)) {
        while (m_exemptOrder.size() >= kMaxExemptUrls)
            m_exempt.remove(m_exemptOrder.takeFirst());
        m_exemptOrder.append(key);
    }
    m_exempt[key].unite(matches);
}

bool Protection::isExempt(const QUrl &url) const
{
    return m_exempt.contains(urlKey(url));
}

bool Protection::exemptionCovers(const QUrl &pageUrl, const urlguard::Verdict &verdict) const
{
    return exemptCovers(urlKey(pageUrl), verdict);
}

bool Protection::exemptCovers(const QString &pageKey, const urlguard::Verdict &verdict) const
{
    const auto it = m_exempt.constFind(pageKey);
    if (it == m_exempt.cend())
        return false;
    // Only what the user saw on the warning page: a new match (another list, another expression) warns again.
    for (const urlguard::Match &m : verdict.matches) {
        if (!it->contains(fromStd(m.list) + QLatin1Char('\n') + fromStd(m.expression)))
            return false;
    }
    return true;
}

QString Protection::summarize(const urlguard::Verdict &verdict) const
{
    QStringList parts;
    for (const urlguard::Match &m : verdict.matches)
        parts.append(QStringLiteral("%1: %2").arg(fromStd(m.list), fromStd(m.expression)));
    return parts.join(QStringLiteral(", "));
}
