// Package mqttbridge puts label printers on an MQTT broker: it publishes each printer's status
// and counters (retained) and takes print commands, each printed at most once through an
// outbox file. Command labelprinter-mqtt runs it from a YAML file; a Go service can run it
// itself:
//
//	cfg, err := mqttbridge.LoadConfig("bridge.yml") // errors are *ConfigError, naming the field
//	if err != nil { ... }
//	b, err := mqttbridge.New(*cfg, mqttbridge.WithLogger(logger))
//	if err != nil { ... }
//	err = b.Run(ctx) // until ctx ends; then a clean stop
//
// # At most once
//
// A printJob or trigger command is acknowledged to the broker (QoS 1, a persistent session,
// manual acknowledgements in arrival order) only after the outbox committed it under its id
// and its "queued" result was taken by the broker. A crash before that leaves the command
// with the broker, which delivers it again; a command whose id the outbox already holds adds
// nothing and is answered "duplicate". Ids belong to a printer: the same id on two printers is
// two commands. What makes a command the same comes from the caller, never from the broker's
// packet identifiers: an abortPrint is recorded under its id, in a ledger file beside the
// outbox, before it is sent, so the id again answers its record and does nothing; a cancel or
// resend must name the entry's attempts it saw ({"id":"X","attempts":1}; without them it is
// invalid) and acts only while the entry still has them, so the same command again, redelivered
// or published anew, finds the entry changed, does nothing and is answered "duplicate". A
// cancel naming 0 attempts of an id not yet enqueued leaves a tombstone in the ledger: the job
// that comes later with that id is answered "cancelled" and never sent. Each final (or
// unknown) result the broker took is marked in the ledger, and a start publishes again every
// result without its mark: one lost with a bridge killed before the broker's PUBACK comes at
// least once. Invalid commands are answered "invalid", acknowledged and never executed;
// a job member that is not one of the maker's documented print-job attributes, spelled
// exactly, makes its command invalid, and so does a labelData other than an object or null.
// A job without "copies" prints on every trigger until it is deselected. A printJob or
// trigger may carry "expireAfter", how long it may wait in the outbox before it expires.
//
// # Topics
//
// Under <topic_prefix>/<printer name>: status, counters and outbox ([OutboxState]; retained),
// result (QoS 1), and cmd/printJob, cmd/trigger, cmd/abortPrint, cmd/cancel, cmd/resend;
// <topic_prefix>/bridge/online
// holds an [OnlineState]: "online" or "offline" and the process (also the connection's Will,
// with a Will Delay Interval of 0).
// Every result of a command also goes to its MQTT 5 Response Topic with its Correlation Data;
// a command whose Response Topic is not a valid topic name, starts with "$" or lies under
// <topic_prefix> is answered "invalid" on its result topic alone, and not executed. A
// command on a topic whose result topic would be longer than MQTT allows is answered on
// <topic_prefix>/bridge/result.
// The README of cmd/labelprinter-mqtt has the payloads.
//
// # Pairs
//
// With Config.Outbox.Postgres instead of a state directory, the outboxes, the ledger and a
// lease keyed by the broker's client id live in PostgreSQL, and any number of bridges may run
// with one configuration: the one holding the lease connects and bridges, the others stand by
// without connecting, and one of them takes over within the lease's TTL once the active one
// dies. A bridge that cannot renew its lease leaves the broker with its Will before the lease
// runs out, executes nothing more, and Run returns [ErrLeaseLost]: it acts only until 4/5 of
// the TTL after its last renewal was sent, by its own monotonic clock, and an abortPrint it
// sends, the SDK's retries included, is cut off at that deadline, or at once when another
// bridge holds the lease, before anything of it that was not yet written leaves. A bridge
// whose acquire was answered too late to be certain (a stalled database) renews at once and
// acts only after a renewal answered in time; it does not give up for it. Behind a pooler in
// transaction mode, which does not carry the outboxes' LISTEN, Run ends with a [ConfigError]
// unless PostgresConfig.ListenDSN reaches the database without it.
//
// # One process per client id
//
// Two processes with one broker client id take the session from each other without end. A
// bridge whose session another connection took (DISCONNECT reason 0x8E, or, from brokers that
// close the connection without a word, 10 connections in a row closed within 2 s of being
// accepted) stops at once without reconnecting, and Run returns [ErrSessionTakenOver]. At
// start, a bridge that finds <topic_prefix>/bridge/online held by another live process
// refuses to connect, unless that one is of its own pair, and Run returns
// [ErrAnotherBridgeOnline].
//
// # Sparkplug B
//
// With a Config.Sparkplug block the bridge is also a Sparkplug B edge node (group_id,
// edge_node_id; each printer a device by its name), on a connection of its own (client id
// "<broker.client_id>-spb" unless sparkplug.client_id says otherwise; on sparkplug.broker_url
// when set, else on broker.url) with Clean Start, a
// Session Expiry of 0 and an NDEATH Will carrying bdSeq, which is one more at every CONNECT
// across restarts (kept in state_dir, or for a pair in PostgreSQL; only the lease holder runs
// the node). NBIRTH has seq 0, then a DBIRTH per printer; every message after counts seq up by
// one (mod 256). A printer's metrics change by exception in DDATA; a printer that stops
// answering gets a DDEATH, and a DBIRTH when it is back. A Primary Host's STATE is honoured
// when sparkplug.primary_host_id is set. A host writes the printer's Command/* metrics (String
// JSON, as on the bridge's own command topics) in a DCMD: each goes through the same queue,
// outbox and ledger as the bridge's own commands, so the same id again prints nothing and is
// answered duplicate, and a command without an id is refused; outcomes are Command/LastResult,
// and the last 100 Command/Results in the DBIRTH.
//
// # Monitoring
//
// [Bridge.Collector] gives the bridge's Prometheus metrics (results by command and state,
// outbox entries by printer and state, active, connected, a pair's lease and its renewal
// age, each printer's reachability and the class of its last read error), and
// [Bridge.Health] whether it is active and connected: ready to take commands. A printer that
// cannot be read is logged at warn once per change of the reason, and its status carries the
// reason.
//
// [StartBroker] runs an MQTT broker in the process, for trying the bridge out and for tests.
package mqttbridge
