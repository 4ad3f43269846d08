package mqttbridge

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"syscall"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// This file holds why a printer cannot be read: the class of a failed counters or /status
// read (a metric's label value), the reason P/status carries, and the warning logged once per
// change of class.

// readError classifies err, a failed read of p's counters: class is one of a fixed few words,
// reason says what to check, in the configuration's words. The SDK's errors carry no
// credential, so neither does reason.
func readError(p *printer, err error) (class, reason string) {
	var apiErr *labelprinter.APIError
	var decErr *labelprinter.DecodeError
	var dnsErr *net.DNSError
	var netErr net.Error
	var x509Err x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var certErr x509.CertificateInvalidError
	var tlsVerify *tls.CertificateVerificationError
	var tlsRecord tls.RecordHeaderError
	field := fmt.Sprintf("printers[%d]", p.index)
	switch {
	case errors.Is(err, labelprinter.ErrNotFound) && p.remote != "":
		return "not_found", fmt.Sprintf("no printer named %s on the controller: check %s.printer", p.remote, field)
	case errors.Is(err, labelprinter.ErrNotFound):
		return "not_found", fmt.Sprintf("the controller has no single-printer paths (404): name the printer in %s.printer", field)
	case errors.Is(err, labelprinter.ErrUnauthorized):
		return "unauthorized", fmt.Sprintf("the controller refused the credentials (401): check %s.http_client_config", field)
	case errors.Is(err, labelprinter.ErrForbidden):
		return "forbidden", fmt.Sprintf("the controller refused the request (403): check %s.http_client_config", field)
	case errors.As(err, &apiErr):
		return "http_status", fmt.Sprintf("the controller answered %d: %v", apiErr.StatusCode, err)
	case errors.As(err, &decErr):
		return "bad_response", fmt.Sprintf("the controller's answer is not a label printer's: check %s.url: %v", field, err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection_refused", fmt.Sprintf("connection refused: check %s.url and that the controller is on: %v", field, err)
	case errors.As(err, &x509Err), errors.As(err, &hostErr), errors.As(err, &certErr), errors.As(err, &tlsVerify), errors.As(err, &tlsRecord):
		return "tls", fmt.Sprintf("TLS: check %s.url and %s.http_client_config.tls_config: %v", field, field, err)
	case errors.As(err, &dnsErr):
		return "dns", fmt.Sprintf("the controller's host name does not resolve: check %s.url: %v", field, err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout", fmt.Sprintf("no answer in time: %v", err)
	}
	return "other", err.Error()
}

// readFailed records a failed counters read of p: a new class is logged at warn, with what to
// check, and its reason goes on P/status; the same class again logs nothing. The caller then
// calls setCounters(p, nil), which publishes the status.
func (b *Bridge) readFailed(p *printer, err error) {
	class, reason := readError(p, err)
	p.mu.Lock()
	changed := class != p.errClass
	if changed {
		p.errClass, p.errReason = class, reason
	}
	p.mu.Unlock()
	if changed {
		b.log.Warn("cannot read the printer", "printer", p.name, "class", class, "reason", reason)
	} else {
		b.log.Debug("reading counters failed", "printer", p.name, "err", err)
	}
}

// statusError classifies err, a failed read of ctl's /status, as readError does a counters
// read; the reason says that it is the controller's /status that failed, naming the first of
// its printers in the configuration.
func statusError(ctl *controller, err error) (class, reason string) {
	p := ctl.printers[0]
	if errors.Is(err, labelprinter.ErrNotFound) {
		class, reason = "not_found", fmt.Sprintf("the controller has no /status (404): check printers[%d].url", p.index)
	} else {
		class, reason = readError(p, err)
	}
	return class, "the controller's status cannot be read (GET /status): " + reason
}

// statusFailed records a failed /status read of ctl: its printers' status then says
// reachable:false with the reason; a new class is logged at warn once, as readFailed does.
func (b *Bridge) statusFailed(ctl *controller, err error) {
	class, reason := statusError(ctl, err)
	ctl.mu.Lock()
	changed := class != ctl.statusClass
	ctl.status, ctl.statusClass, ctl.statusReason = nil, class, reason
	ctl.mu.Unlock()
	if changed {
		b.log.Warn("cannot read the controller's status", "printer", ctl.printers[0].name, "class", class, "reason", reason)
	} else {
		b.log.Debug("reading the status failed", "printer", ctl.printers[0].name, "err", err)
	}
}

// statusRead records a /status answer of ctl.
func (b *Bridge) statusRead(ctl *controller, st *labelprinter.PrinterStatus) {
	ctl.mu.Lock()
	was := ctl.statusClass
	ctl.status, ctl.statusClass, ctl.statusReason = st, "", ""
	ctl.mu.Unlock()
	if was != "" {
		b.log.Info("the controller's status can be read again", "printer", ctl.printers[0].name, "was", was)
	}
}

// readState is what P/status and the metrics say of p's reads: reachable while both its
// counters and its controller's /status read, else the class and the reason of the failure
// (the counters' first). A /status not read yet leaves the counters' read alone to say. st is
// the controller's last status, nil while /status does not answer. The caller holds p.mu;
// ctl.mu is taken inside it, never the other way round.
func (p *printer) readState() (reachable bool, class, reason string, st *labelprinter.PrinterStatus) {
	p.ctl.mu.Lock()
	st, sClass, sReason := p.ctl.status, p.ctl.statusClass, p.ctl.statusReason
	p.ctl.mu.Unlock()
	switch {
	case !p.reachable:
		return false, p.errClass, p.errReason, st
	case st == nil && sClass != "":
		return false, sClass, sReason, st
	}
	return true, "", "", st
}
