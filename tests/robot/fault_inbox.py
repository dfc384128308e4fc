#!/usr/bin/python3
"""fault_inbox.py - a public-inbox that misbehaves, for the robot's poller.

Usage: fault_inbox.py PORT LORE_URL STATE_DIR

Serves /MODE/REST on 127.0.0.1:PORT. While STATE_DIR/fixed-MODE does not
exist, MODE decides the answer:
  html    200 text/html, a web page instead of the Atom feed
  rss     200 an RSS 2.0 document instead of Atom
  e500    500 Internal Server Error
  gzip    the real feed, but every t.mbox.gz cut to half its bytes
  slow    the real answers, each after SLOW_S seconds (under kperfd's 30 s)
  big     the real feed with one more series head, big-cover@fault.test,
          whose t.mbox.gz holds a cover, its patch and BIG_REPLIES replies
  other   the real answers
Once STATE_DIR/fixed-MODE exists (the test touches it) every answer is the
real one: REST fetched from LORE_URL, a real public-inbox (tests/robot/lore.sh).
Each request is appended to STATE_DIR/hits-MODE ("PATH\n") before it is
answered, so a test can see that a fetch is under way.
"""
import gzip
import http.server
import os
import sys
import time
import urllib.error
import urllib.request

PORT, LORE, STATE = int(sys.argv[1]), sys.argv[2].rstrip('/') + '/', sys.argv[3]
SLOW_S = 3
BIG_REPLIES = 2500
BIG = 'big-cover@fault.test'


def upstream(rest):
    try:
        with urllib.request.urlopen(LORE + rest, timeout=20) as r:
            return r.status, r.headers.get('Content-Type', ''), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get('Content-Type', ''), e.read()


def big_mbox():
    head = ('From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: Big <big@fault.test>\n'
            'To: linux-mm@kvack.org\nSubject: [PATCH 0/1] big thread\n'
            'Date: Thu, 01 Jan 2026 00:00:00 +0000\nMessage-ID: <%s>\n\ncover\n\n' % BIG)
    patch = ('From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: Big <big@fault.test>\n'
             'To: linux-mm@kvack.org\nSubject: [PATCH 1/1] mm: big\n'
             'Date: Thu, 01 Jan 2026 00:00:00 +0000\nMessage-ID: <big-1@fault.test>\n'
             'In-Reply-To: <%s>\nReferences: <%s>\n\n'
             'diff --git a/mm/big.c b/mm/big.c\n--- a/mm/big.c\n+++ b/mm/big.c\n'
             '@@ -1 +1 @@\n-a\n+b\n\n' % (BIG, BIG))
    parts = [head, patch]
    for i in range(BIG_REPLIES):
        parts.append('From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: R <r@fault.test>\n'
                     'Subject: Re: [PATCH 0/1] big thread\nMessage-ID: <big-r%d@fault.test>\n'
                     'In-Reply-To: <%s>\nReferences: <%s>\n\nreply %d\n\n' % (i, BIG, BIG, i))
    return gzip.compress(''.join(parts).encode())


BIG_ENTRY = ('<entry><author><name>Big</name><email>big@fault.test</email></author>'
             '<title type="html">[PATCH 0/1] big thread</title>'
             '<updated>2026-01-01T00:00:00Z</updated>'
             '<link href="http://127.0.0.1:%d/big/%s/"/>'
             '<id>urn:uuid:00000000-0000-0000-0000-00000000b16e</id></entry>' % (PORT, BIG))


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.0'

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, ctype, body):
        self.send_response(status)
        self.send_header('Content-Type', ctype or 'application/octet-stream')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parts = self.path.lstrip('/').split('/', 1)
        mode, rest = parts[0], parts[1] if len(parts) > 1 else ''
        with open(os.path.join(STATE, 'hits-' + mode), 'a') as f:
            f.write(self.path + '\n')
        fixed = os.path.exists(os.path.join(STATE, 'fixed-' + mode))
        if mode == 'big':
            if rest.startswith(BIG + '/'):
                return self.answer(200, 'application/gzip', big_mbox())
            st, ct, body = upstream(rest)
            if rest.startswith('new.atom') and st == 200:
                body = body.replace(b'</feed>', BIG_ENTRY.encode() + b'</feed>')
            return self.answer(st, ct, body)
        if fixed:
            return self.answer(*upstream(rest))
        if mode == 'html':
            return self.answer(200, 'text/html; charset=UTF-8',
                               b'<!DOCTYPE html>\n<html><body><h1>Maintenance</h1></body></html>\n')
        if mode == 'rss':
            return self.answer(200, 'application/rss+xml',
                               b'<?xml version="1.0"?>\n<rss version="2.0"><channel>'
                               b'<title>linux-mm</title><item><title>[PATCH 0/3] x</title>'
                               b'</item></channel></rss>\n')
        if mode == 'e500':
            return self.answer(500, 'text/plain', b'Internal Server Error\n')
        if mode == 'slow':
            time.sleep(SLOW_S)
        st, ct, body = upstream(rest)
        if mode == 'gzip' and rest.endswith('t.mbox.gz'):
            body = body[:len(body) // 2]
        return self.answer(st, ct, body)


class Server(http.server.ThreadingHTTPServer):
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # a client gone mid-answer (kperfd killed) is no error of ours


Server(('127.0.0.1', PORT), H).serve_forever()
