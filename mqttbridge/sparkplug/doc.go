// Package sparkplug encodes and decodes Sparkplug B payloads and topics, the MQTT form
// Ignition, HiveMQ, EMQX and other hosts consume.
//
// The payload codec is written with protowire from the field numbers of the specification's
// payload chapter (Eclipse Tahu's sparkplug_b.proto): Payload, Metric with its MetaData and
// PropertySet, DataSet and Template, every datatype. Unmarshal skips fields it does not know,
// checks every length against the input and bounds nesting, so a malformed payload is an
// error, never a panic; it also takes the encodings other codecs send that the specification
// does not spell out (a negative Int8 as 8, 32 or 64-bit two's complement, a UInt32 in
// long_value as Tahu's JavaScript codec puts it). Marshal sends what the specification says
// and refuses a value of the wrong Go type or out of its datatype's range.
//
// Topics are parsed and built by ParseTopic and Topic.String, a Primary Host's STATE message
// by StateTopic, ParseState and State.Marshal.
package sparkplug
