#!/usr/bin/python3
"""SMTP -> public-inbox bridge for kperf robot tests (started by lore.sh smtp).

usage: LORE_W=W LORE_URL=INBOX_URL LORE_ADDR=ADDR /usr/bin/python3 smtp_to_inbox.py HOST PORT

Every message received is delivered into the inbox exactly as `lore.sh inject` does:
CRLF -> LF, a leading mbox From_ line dropped, a Received: header prepended, piped to
public-inbox-mda with ORIGINAL_RECIPIENT=ADDR (HOME and PI_CONFIG come from the
environment), then the httpd (W/httpd.pid) gets a SIGHUP so search sees the mail.

Replies: 250 only after mda exited 0 and nothing fell into the emergency Maildir;
451 otherwise. A message whose Message-ID is already in the archive is answered 250
and not delivered again (public-inbox would put a copy in the emergency Maildir).

Files (under W/smtp/): N.eml = the N-th delivered message as received (LF line ends,
without the added Received:), N = 1, 2, ...; failed-K.eml / dup-K.eml for the others;
W/smtp.log one line per message; W/smtp.ready once the server accepts connections.
"""
import asyncio
import email.utils
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from aiosmtpd.controller import Controller

W = os.environ['LORE_W']
INBOX_URL = os.environ['LORE_URL'].rstrip('/') + '/'
ADDR = os.environ.get('LORE_ADDR', 'linux-mm@kvack.org')
OUT = os.path.join(W, 'smtp')
EMERGENCY = os.path.join(os.environ['HOME'], '.public-inbox', 'emergency')
MDA_TIMEOUT = 60


def log(line):
    with open(os.path.join(W, 'smtp.log'), 'a') as f:
        f.write(time.strftime('%Y-%m-%dT%H:%M:%SZ ', time.gmtime()) + line + '\n')


def emergency_files():
    found = set()
    for sub in ('new', 'cur', 'tmp'):
        d = os.path.join(EMERGENCY, sub)
        if os.path.isdir(d):
            found.update(os.path.join(d, f) for f in os.listdir(d))
    return found


def message_id(msg):
    """Message-ID without <> from the header block (folded headers handled), or None"""
    head = msg.split(b'\n\n', 1)[0]
    m = re.search(rb'^message-id:[ \t]*(?:\n[ \t]+)?<([^>\s]+)>', head, re.I | re.M)
    return m.group(1).decode('utf-8', 'replace') if m else None


def in_archive(mid):
    url = INBOX_URL + urllib.parse.quote(mid, safe='@') + '/raw'
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status == 200
    except urllib.error.HTTPError:
        return False
    except OSError:
        return False


def next_name(prefix):
    k = 1
    while os.path.exists(os.path.join(OUT, f'{prefix}{k}.eml')):
        k += 1
    return os.path.join(OUT, f'{prefix}{k}.eml')


def save(prefix, msg):
    path = next_name(prefix)
    with open(path + '.tmp', 'wb') as f:
        f.write(msg)
    os.rename(path + '.tmp', path)
    return path


def hup_httpd():
    try:
        with open(os.path.join(W, 'httpd.pid')) as f:
            os.kill(int(f.read().strip()), signal.SIGHUP)
    except (OSError, ValueError) as e:
        log(f'warning: could not HUP httpd: {e}')


class Handler:
    def __init__(self):
        self.lock = asyncio.Lock()    # one delivery at a time: N follows arrival order

    async def handle_DATA(self, server, session, envelope):
        async with self.lock:
            return await asyncio.get_running_loop().run_in_executor(
                None, self.deliver, session, envelope)

    def deliver(self, session, envelope):
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode('utf-8', 'surrogateescape')
        msg = raw.replace(b'\r\n', b'\n')
        if msg.startswith(b'From ') and not msg.startswith(b'From:'):
            msg = msg.split(b'\n', 1)[1] if b'\n' in msg else b''
        mid = message_id(msg)
        who = f'from={envelope.mail_from} rcpt={",".join(envelope.rcpt_tos)} mid=<{mid}>'
        if mid and in_archive(mid):
            path = save('dup-', msg)
            log(f'DUP {who} already archived, not delivered again; copy {path}')
            return '250 OK already archived'
        helo = re.sub(r'[^A-Za-z0-9.\-\[\]:]', '_', session.host_name or 'unknown')
        peer = session.peer[0] if session.peer else 'unknown'
        received = (f'Received: from {helo} ([{peer}]) by lab-smtp with SMTP; '
                    f'{email.utils.formatdate(localtime=True)}\n').encode()
        before = emergency_files()
        env = dict(os.environ, ORIGINAL_RECIPIENT=ADDR)
        try:
            p = subprocess.run(['public-inbox-mda'], input=received + msg, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=MDA_TIMEOUT)
            rc, out = p.returncode, p.stdout.decode('utf-8', 'replace').strip()
        except (OSError, subprocess.TimeoutExpired) as e:
            rc, out = -1, str(e)
        new_em = emergency_files() - before
        if rc != 0 or new_em:
            path = save('failed-', msg)
            why = f'mda exit {rc}' if rc != 0 else 'landed in emergency Maildir ' + ' '.join(sorted(new_em))
            log(f'FAIL {who} {why}: {out!r}; copy {path}')
            return f'451 4.3.0 not archived: {why}'
        path = save('', msg)
        log(f'OK {who} -> {path}')
        hup_httpd()
        return '250 OK archived'


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    os.makedirs(OUT, exist_ok=True)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    ctl = Controller(Handler(), hostname=host, port=port, ready_timeout=30)
    ctl.start()
    with open(os.path.join(W, 'smtp.ready'), 'w') as f:
        f.write(f'{os.getpid()} {host}:{port}\n')
    print(f'smtp_to_inbox: pid {os.getpid()} listening on {host}:{port}', flush=True)
    try:
        while not stop:
            time.sleep(0.1)
    finally:
        ctl.stop()
        print('smtp_to_inbox: stopped', flush=True)


if __name__ == '__main__':
    main()
