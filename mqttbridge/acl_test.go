package mqttbridge

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

// TestExampleACL runs mosquitto with the ACL of examples/mqtt: the MES user may publish a
// command, the bridge user may not, and the bridge user may publish its results (0x10, no
// subscriber, is a success). It needs
// mosquitto and mosquitto_passwd.
func TestExampleACL(t *testing.T) {
	bin := mosquittoBin(t)
	passwd, err := exec.LookPath("mosquitto_passwd")
	if bin == "" || err != nil {
		t.Skip("mosquitto or mosquitto_passwd is not installed")
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "passwd")
	for _, u := range []string{"mes", "bridge"} {
		args := []string{"-b", pw, u, u + "-pw"}
		if u == "mes" {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command(passwd, args...).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd: %v %s", err, out)
		}
	}
	// mosquitto started as root reads its files as the mosquitto user.
	_ = os.Chmod(pw, 0o644)
	_ = os.Chmod(dir, 0o755)
	_ = os.Chmod(filepath.Dir(dir), 0o755)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	aclText, err := os.ReadFile(filepath.Join("..", "examples", "mqtt", "labelprinter.acl"))
	if err != nil {
		t.Fatal(err)
	}
	acl := writeFile(t, dir, "labelprinter.acl", string(aclText))
	_ = os.Chmod(acl, 0o644)
	conf := strings.Join([]string{"listener " + port + " 127.0.0.1", "allow_anonymous false",
		"password_file " + pw, "acl_file " + acl, "persistence false", "log_dest stderr", "log_type error"}, "\n") + "\n"
	m := &mosquitto{bin: bin, conf: writeFile(t, dir, "mosquitto.conf", conf), addr: addr}
	m.start(t)
	t.Cleanup(m.stop)

	login := func(user string) *paho.Client {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		cli := paho.NewClient(paho.ClientConfig{Conn: conn})
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if _, err := cli.Connect(ctx, &paho.Connect{ClientID: user + "-acl", CleanStart: true, KeepAlive: 30,
			UsernameFlag: true, Username: user, PasswordFlag: true, Password: []byte(user + "-pw")}); err != nil {
			t.Fatalf("%s: connect: %v", user, err)
		}
		t.Cleanup(func() { _ = cli.Disconnect(&paho.Disconnect{}); <-cli.Done() })
		return cli
	}
	publish := func(cli *paho.Client, topic string) byte {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		resp, err := cli.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: []byte(`{"id":"x"}`)})
		if resp == nil {
			t.Fatalf("publish %s: %v", topic, err)
		}
		return resp.ReasonCode
	}
	mes, bridge := login("mes"), login("bridge")
	if rc := publish(mes, "labelprinter/line1/cmd/printJob"); rc >= 0x80 {
		t.Errorf("mes publishing a command: reason %#x, want success", rc)
	}
	if rc := publish(bridge, "labelprinter/line1/cmd/printJob"); rc < 0x80 {
		t.Errorf("bridge publishing a command: reason %#x, want refused", rc)
	}
	if rc := publish(bridge, "labelprinter/line1/result"); rc >= 0x80 {
		t.Errorf("bridge publishing a result: reason %#x, want success", rc)
	}
	if rc := publish(mes, "labelprinter/line1/status"); rc < 0x80 {
		t.Errorf("mes publishing a status: reason %#x, want refused", rc)
	}
}
