// Command upload-image uploads an image file (PNG, JPEG or TIFF, recognised by its first
// bytes), waits until the printer has processed it and prints what the printer reports. With
// no -file it uploads a generated PNG; with no -url it starts a printer simulator in-process.
//
//	go run ./examples/upload-image -file logo.png -name logo
package main

import (
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
)

func main() {
	url := flag.String("url", "", "printer base URL (empty: start a simulator in-process)")
	file := flag.String("file", "", "image file to upload (empty: a generated PNG)")
	name := flag.String("name", "example-logo", "image name on the printer")
	intent := flag.String("intent", string(labelprinter.IntentPerceptual), "render intent")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *url, *file, *name, labelprinter.Intent(*intent), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "upload-image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, file, name string, intent labelprinter.Intent, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	url, stop, err := printersim.OrStart(url)
	if err != nil {
		return err
	}
	defer stop()
	if file == "" {
		dir, err := os.MkdirTemp("", "upload-image")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		file = filepath.Join(dir, "generated.png")
		if err := writePNG(file); err != nil {
			return err
		}
	}
	c, err := labelprinter.NewClient(url)
	if err != nil {
		return err
	}
	defer c.Close()

	// PutFile streams the file and, being seekable, re-sends it whole if a retry is needed.
	if err := c.Images.PutFile(ctx, name, file, &labelprinter.ImagePutOptions{Intent: intent}); err != nil {
		return err
	}
	info, err := c.Images.WaitReady(ctx, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: %s, %dx%d px (%.1fx%.1f mm), %d bytes, %d channel(s) of %d bits, intent %s\n",
		name, info.State, info.Width, info.Height, info.WidthMM, info.HeightMM, info.FileSize,
		info.Format.Channels, info.Format.BitsPerChannel, info.Intent)
	return nil
}

func writePNG(path string) error {
	img := image.NewRGBA(image.Rect(0, 0, 120, 40))
	for x := 0; x < 120; x++ {
		for y := 0; y < 40; y++ {
			img.Set(x, y, color.RGBA{R: uint8(2 * x), G: uint8(6 * y), B: 128, A: 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
