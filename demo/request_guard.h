// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// RequestGuard: the QWebEngineUrlRequestInterceptor that puts every request of a profile through Protection.
//
// Qt 6 calls interceptRequest() on the UI thread for each request before it is sent, so it must never wait:
// it does only Protection::decide() (one local lookup). A listed main frame is redirected to the urlguard:
// warning page (the listed URL is not fetched); a listed subresource (image, script, frame, XHR...) and any
// request whose URL is not a valid address are blocked.
//
// installGuard() also registers the urlguard: scheme handler on the profile. The scheme itself must be
// registered with registerUrlGuardScheme() before the QApplication exists.
#ifndef URLGUARD_DEMO_REQUEST_GUARD_H_
#define URLGUARD_DEMO_REQUEST_GUARD_H_

#include <QPointer>
#include <QWebEngineUrlRequestInterceptor>

class Protection;
class QWebEngineProfile;
class Verifier;

class RequestGuard : public QWebEngineUrlRequestInterceptor
{
    Q_OBJECT
public:
    // `protection` must outlive the guard (or the guard lets everything through once it is gone).
    explicit RequestGuard(Protection *protection, QObject *parent = nullptr);

    void interceptRequest(QWebEngineUrlRequestInfo &info) override;

private:
    QPointer<Protection> m_protection;
};

// Installs a RequestGuard and the urlguard: scheme handler on `profile` (both become children of the
// profile). `protection` and `verifier` must outlive the profile's pages.
void installGuard(QWebEngineProfile *profile, Protection *protection, Verifier *verifier);

#endif // URLGUARD_DEMO_REQUEST_GUARD_H_
