# install.mk - `make install` beyond the binaries (the Makefile and
# collectors/collect.mk install those): man pages, the migrations (for
# reference: kperfd carries them compiled in), example configurations,
# systemd units, sysusers.d and tmpfiles.d entries, the Patroni / etcd /
# pgBackRest templates (packaging/patroni/). Included by the Makefile;
# honours PREFIX and DESTDIR. Configuration goes to /etc when PREFIX is /usr,
# else to PREFIX/etc (SYSCONFDIR overrides).

SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
MANDIR     ?= $(PREFIX)/share/man
KPERF_DATA ?= $(PREFIX)/share/kperf
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d

PKG_UNITS := kperfd.service kperf-collect-flush.service kperf-collect-flush.timer \
             kperf-agent.service
PKG_BUILT := $(PKG_UNITS:%=$(BUILD)/packaging/%)

.PHONY: install-packaging
install: install-packaging

# Units name the installed paths: fill them in per PREFIX (rebuilt when it changes).
$(BUILD)/packaging/%: packaging/% $(BUILD)/packaging/.prefix
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< > $@.tmp && mv $@.tmp $@

$(BUILD)/packaging/.prefix: FORCE
	@mkdir -p $(dir $@)
	@echo '$(PREFIX) $(SYSCONFDIR)' | cmp -s - $@ || echo '$(PREFIX) $(SYSCONFDIR)' > $@

.PHONY: FORCE
FORCE:

install-packaging: $(PKG_BUILT)
	install -D -m 644 packaging/kperfd.8 $(DESTDIR)$(MANDIR)/man8/kperfd.8
	install -D -m 644 packaging/kperf-collect.1 $(DESTDIR)$(MANDIR)/man1/kperf-collect.1
	install -d $(DESTDIR)$(KPERF_DATA)/migrations
	install -m 644 $(MIGRATIONS) $(DESTDIR)$(KPERF_DATA)/migrations/
	install -D -m 644 packaging/kperfd.conf $(DESTDIR)$(SYSCONFDIR)/kperf/kperfd.conf.example
	install -D -m 644 packaging/collect.conf $(DESTDIR)$(SYSCONFDIR)/kperf/collect.conf.example
	install -D -m 644 packaging/catalogue.conf $(DESTDIR)$(SYSCONFDIR)/kperf/catalogue.conf.example
	install -d $(DESTDIR)$(UNITDIR)
	install -m 644 $(PKG_BUILT) $(DESTDIR)$(UNITDIR)/
	install -D -m 644 packaging/kperf.sysusers $(DESTDIR)$(SYSUSERSDIR)/kperf.conf
	install -D -m 644 packaging/kperf-collect.tmpfiles $(DESTDIR)$(TMPFILESDIR)/kperf-collect.conf
	install -d $(DESTDIR)$(KPERF_DATA)/patroni
	install -m 644 packaging/patroni/patroni.yml.in packaging/patroni/etcd.yml.in \
		packaging/patroni/pgbackrest.conf.in $(DESTDIR)$(KPERF_DATA)/patroni/
	install -m 755 packaging/patroni/render.sh $(DESTDIR)$(KPERF_DATA)/patroni/
	install -D -m 755 packaging/kernel/kperf-kexec $(DESTDIR)$(PREFIX)/lib/kperf/kperf-kexec
	install -d $(DESTDIR)$(KPERF_DATA)/kernel
	install -m 644 packaging/kernel/kperf.config packaging/kernel/vm.config \
		$(DESTDIR)$(KPERF_DATA)/kernel/
