package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/labelprinter/go-labelprinter/mqttbridge/sparkplug"
	"github.com/spf13/cobra"
)

// maxSparkplugPayload is the largest payload decode reads: MQTT's own bound on a packet.
const maxSparkplugPayload = 256 << 20

func (a *app) sparkplugCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sparkplug",
		Short: "Read Sparkplug B messages, as the MQTT bridge's edge node and its hosts send them",
	}
	var topic string
	decode := &cobra.Command{
		Use:   "decode [FILE]",
		Short: "Print a Sparkplug B payload from FILE (or stdin, or -) as JSON",
		Long: "decode reads one payload, as mosquitto_sub -F %p writes it to a file, and prints its\n" +
			"metrics as JSON whatever -o says. With --topic it also prints the topic's parts, and a\n" +
			"STATE topic's payload is read as a Primary Host's JSON state.\n\n" +
			"  mosquitto_sub -t 'spBv1.0/Line1/DBIRTH/#' -C 1 -F %p | labelctl sparkplug decode",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var t *sparkplug.Topic
			if topic != "" {
				parsed, err := sparkplug.ParseTopic(topic)
				if err != nil {
					return usagef("--topic: %v", err)
				}
				t = &parsed
			}
			b, err := a.readPayload(args)
			if err != nil {
				return err
			}
			if t != nil && t.MessageType == sparkplug.STATE {
				s, err := sparkplug.ParseState(b)
				if err != nil {
					return err
				}
				return a.printJSON(struct {
					Topic *sparkplug.Topic `json:"topic"`
					State sparkplug.State  `json:"state"`
				}{t, s})
			}
			p, err := sparkplug.Unmarshal(b)
			if err != nil {
				return err
			}
			if t == nil {
				return a.printJSON(p)
			}
			return a.printJSON(struct {
				Topic   *sparkplug.Topic   `json:"topic"`
				Payload *sparkplug.Payload `json:"payload"`
			}{t, p})
		},
	}
	decode.Flags().StringVar(&topic, "topic", "", "the topic the payload came on, such as spBv1.0/Line1/DDATA/bridge-a/line1")
	cmd.AddCommand(decode)
	return cmd
}

// readPayload reads the file args names, or stdin when there is none or it is "-".
func (a *app) readPayload(args []string) ([]byte, error) {
	r, name := a.stdin, "stdin"
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, name = f, args[0]
	}
	b, err := io.ReadAll(io.LimitReader(r, maxSparkplugPayload+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(b) > maxSparkplugPayload {
		return nil, fmt.Errorf("%s holds more than %d MiB, more than an MQTT message can", name, maxSparkplugPayload>>20)
	}
	if len(b) == 0 {
		return nil, errors.New(name + " is empty, not a Sparkplug B payload")
	}
	return b, nil
}
