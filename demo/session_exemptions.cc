// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "session_exemptions.h"

#include <QByteArray>
#include <QRandomGenerator>

namespace {

// One match as the session remembers it: the list and the expression (a newline is in neither).
QString matchKey(const urlguard::Match &m)
{
    return QString::fromStdString(m.list) + QLatin1Char('\n') + QString::fromStdString(m.expression);
}

} // namespace

QString SessionExemptions::urlKey(const QUrl &url)
{
    return url.adjusted(QUrl::RemoveFragment).toString(QUrl::FullyEncoded);
}

QSet<QString> SessionExemptions::matchKeys(const urlguard::Verdict &verdict)
{
    QSet<QString> keys;
    for (const urlguard::Match &m : verdict.matches)
        keys.insert(matchKey(m));
    return keys;
}

QString SessionExemptions::issueProceedToken(const QUrl &url, const urlguard::Verdict &verdict)
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

std::optional<QUrl> SessionExemptions::redeemProceedToken(const QString &token)
{
    const auto it = m_pendingTokens.constFind(token);
    if (it == m_pendingTokens.cend())
        return std::nullopt;
    const PendingProceed pending = it.value();
    m_pendingTokens.erase(it);
    m_tokenOrder.removeOne(token);
    exempt(pending.url, pending.matches, /*proceeded=*/true);
    return pending.url;
}

void SessionExemptions::exemptVerified(const QUrl &url, const urlguard::Verdict &verdict)
{
    exempt(url, matchKeys(verdict), /*proceeded=*/false);
}

void SessionExemptions::exempt(const QUrl &url, const QSet<QString> &matches, bool proceeded)
{
    const QString key = urlKey(url);
    if (!m_exempt.contains(key)) {
        while (m_exemptOrder.size() >= kMaxExemptUrls)
            m_exempt.remove(m_exemptOrder.takeFirst());
        m_exemptOrder.append(key);
    }
    Exemption &exemption = m_exempt[key];
    exemption.matches.unite(matches);
    exemption.proceeded = exemption.proceeded || proceeded;
}

bool SessionExemptions::isExempt(const QUrl &url) const
{
    return m_exempt.contains(urlKey(url));
}

const SessionExemptions::Exemption *SessionExemptions::covering(const QString &pageKey,
                                                                const urlguard::Verdict &verdict) const
{
    const auto it = m_exempt.constFind(pageKey);
    if (it == m_exempt.cend())
        return nullptr;
    // Only what the user saw on the warning page (or the verifier cleared): a new match (another list,
    // another expression) warns again.
    for (const urlguard::Match &m : verdict.matches) {
        if (!it->matches.contains(matchKey(m)))
            return nullptr;
    }
    return &it.value();
}
