package printersim_test

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// send makes one request to the simulator and returns its status and body in one line.
func send(method, url, body string) string {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return err.Error()
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(fmt.Sprintf("%d %s", resp.StatusCode, b))
}

// A printer on a loopback port: store a label, select it for two copies, and trigger three
// times; the third trigger finds nothing selected.
func ExampleStart() {
	srv, err := printersim.Start(printersim.WithPrinters("line1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	api := srv.URL + "/api/v3"

	fmt.Println(send("PUT", api+"/labels/SHIP", `{"format":3,"text":"ship it"}`))
	fmt.Println(send("POST", api+"/printers/line1/printJob", `{"labelName":"SHIP","copies":2}`))
	for range 3 {
		fmt.Println(send("POST", api+"/printers/line1/trigger", ""))
	}
	c, _ := srv.Sim.Counters("line1")
	fmt.Printf("%+v\n", c)
	// Output:
	// 204
	// 200 {"printer":"line1","label":"SHIP","queueLength":1}
	// 200 {"printer":"line1","label":"SHIP","printed":1,"queueLength":1}
	// 200 {"printer":"line1","label":"SHIP","printed":1,"queueLength":0}
	// 409 {"message":"no job selected on line1"}
	// {Triggers:3 TriggerBounces:1 PrintedLabels:2}
}

// A Simulator is an http.Handler: serve it where a test wants it, here with httptest.
func ExampleNew() {
	sim := printersim.New(printersim.WithPrinters("line1", "line2"))
	defer sim.Close()
	ts := httptest.NewServer(sim)
	defer ts.Close()

	fmt.Println(send("GET", ts.URL+"/api/v3/printers/line2/printCounters", ""))
	fmt.Println(send("GET", ts.URL+"/api/v3/printers/line3/printCounters", ""))
	// Output:
	// 200 {"triggers":0,"triggerBounces":0,"printedLabels":0}
	// 404 {"message":"no printer \"line3\""}
}

// A fault for the next print job: the printer is busy once, then takes the job.
func ExampleSimulator_InjectFault() {
	srv, err := printersim.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.Sim.InjectFault(printersim.Fault{
		Method: "POST", Route: "/api/v3/printers/{name}/printJob", Times: 1, Status: 503, RetryAfter: "1",
	})
	job := srv.URL + "/api/v3/printers/" + printersim.DefaultPrinter + "/printJob"
	fmt.Println(send("POST", job, `{"labelData":{"format":3}}`))
	fmt.Println(send("POST", job, `{"labelData":{"format":3}}`))
	fmt.Println(srv.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"), "requests")
	// Output:
	// 503 {"message":"injected fault: 503"}
	// 200 {"printer":"line1","queueLength":1}
	// 2 requests
}

// The product sensor: PressTrigger prints as a trigger request would. A table job whose
// column was taken away by a later table PUT bounces and leaves the queue, and the printer
// keeps working.
func ExampleSimulator_PressTrigger() {
	srv, err := printersim.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	api, sim := srv.URL+"/api/v3", srv.Sim

	send("PUT", api+"/labels/BOX", `{"text":"{{SKU}}"}`)
	send("PUT", api+"/tables/Products", `{"columns":["SKU","Label"],"rows":[["S1","BOX"],["S2","BOX"]]}`)
	send("POST", api+"/printJob", `{"tableName":"Products","labelColumn":"Label"}`)
	fmt.Println(sim.PressTrigger("line1"))
	send("PUT", api+"/tables/Products", `{"columns":["SKU"],"rows":[["S1"],["S2"]]}`)
	fmt.Println(sim.PressTrigger("line1"))
	fmt.Println(sim.QueueLength("line1"), "jobs selected")
	c, _ := sim.Counters("line1")
	fmt.Printf("%+v\n", c)
	// Output:
	// true <nil>
	// false <nil>
	// 0 jobs selected
	// {Triggers:2 TriggerBounces:1 PrintedLabels:1}
}

// A print job over a limit is refused with the limit in its message.
func ExampleMaxCount() {
	srv, err := printersim.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	fmt.Println(send("POST", srv.URL+"/api/v3/printJob", `{"labelData":{},"copies":99999999999}`))
	// Output:
	// 400 {"message":"print job: copies must be a whole number from 0 to 2147483647, not 99999999999"}
}

// A command that serves a simulator registers the shared flags and defaults, then turns what
// was typed into options (cmd/printersim does this with the standard flag package, labelctl
// sim with cobra's).
func ExampleFlags() {
	var f printersim.Flags
	fs := flag.NewFlagSet("mysim", flag.ContinueOnError)
	f.Register(fs)
	_ = fs.Parse([]string{"-addr", "127.0.0.1:0", "-printers", "line1,line2"})
	opts, printers, err := f.Options()
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := printersim.Listen(f.Addr, opts...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	fmt.Println(printers, srv.Sim.QueueLength("line2"))

	_ = fs.Parse([]string{"-addr", "8631"})
	_, _, err = f.Options()
	fmt.Println(err)
	// Output:
	// [line1 line2] 0
	// --addr must be host:port, such as 127.0.0.1:8631, not "8631"
}
