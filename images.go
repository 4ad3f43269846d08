package labelprinter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"
)

// ImagesService manages the images labels refer to.
type ImagesService service

// ImageListOptions refines Images.List.
type ImageListOptions struct {
	// Details asks the printer to fill each entry with the image's details.
	Details bool `url:"details,omitempty"`
}

// ImagePutOptions refines Images.Put and Images.PutFile.
type ImagePutOptions struct {
	// Intent is the render intent, sent as the intent query parameter.
	Intent Intent `url:"intent,omitempty"`
	// Size declares the body's length in bytes for Put, for a reader that cannot tell it (a
	// pipe, a network stream): the body is then sent with that Content-Length, and a reader
	// that ends early or holds more is an error, never a truncated image. An io.Seeker or a
	// reader with a Len() int method (bytes.Buffer) needs none; if Size is set anyway it must
	// match. Without a length the body goes out chunked. Over HTTP/1.1 it first asks with
	// "Expect: 100-continue", so a printer that refuses chunked bodies answers 411 Length
	// Required before the body is sent (the error then says to pass Size or use PutFile); over
	// HTTP/2, where a server need not answer that question, the body goes out at once. Over
	// TLS the question is asked once the printer has answered a request over HTTP/1.1. Zero
	// means not declared; it is never sent to the printer.
	Size int64 `url:"-"`
}

// ImageUpload is the JSON form of an image upload: the image file's bytes (PNG, JPEG, TIFF or
// NetPBM), which travel base64-encoded, and an optional render intent.
type ImageUpload struct {
	// Data is the image file's bytes; it is sent base64-encoded.
	Data []byte `json:"data"`
	// Intent is the render intent; "" is not sent.
	Intent Intent `json:"intent,omitempty"`
}

// imageContentTypes are the upload media types the contract lists.
var imageContentTypes = map[string]bool{
	"application/json": true, "image/jpeg": true, "image/png": true, "image/tiff": true,
}

// List returns every image, keyed by name; with Details set each entry carries the image's
// details (GET /api/v3/images).
func (s *ImagesService) List(ctx context.Context, opts *ImageListOptions) (map[string]json.RawMessage, error) {
	const op = "Images.List"
	q, err := encodeQuery(op, opts)
	if err != nil {
		return nil, err
	}
	return s.client.doDictionary(ctx, &operation{name: op, method: "GET", path: "/images", query: q})
}

// Info returns what the printer knows of the image called name, including its processing
// state (GET /api/v3/images/{name}/info).
func (s *ImagesService) Info(ctx context.Context, name string) (*ImageInfo, error) {
	const op = "Images.Info"
	esc, err := escapeName(op, "image", name)
	if err != nil {
		return nil, err
	}
	info := new(ImageInfo)
	if err := s.client.doJSON(ctx, &operation{name: op, method: "GET", path: "/images/", seg: esc, tail: "/info"}, "ImageInfo", info); err != nil {
		return nil, err
	}
	return info, nil
}

// Download streams the image called name into w and returns the content type the printer
// sent (GET /api/v3/images/{name}). The image is never held in memory; a body cut short
// returns an error, so a partial image is never mistaken for a whole one.
func (s *ImagesService) Download(ctx context.Context, name string, w io.Writer) (string, error) {
	const op = "Images.Download"
	esc, err := escapeName(op, "image", name)
	if err != nil {
		return "", err
	}
	if w == nil {
		return "", invalidArg(op, "writer is nil")
	}
	o := &operation{name: op, method: "GET", path: "/images/", seg: esc, accept: "*/*"}
	resp, err := s.client.send(ctx, o)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return "", s.client.newTransportError(o, 1, true, fmt.Errorf("reading image: %w", err))
	}
	return resp.Header.Get("Content-Type"), nil
}

// Put creates or replaces the image called name from body, streamed with the given content
// type: application/json, image/jpeg, image/png or image/tiff (PUT /api/v3/images/{name}).
// An io.Seeker body is rewound and sent whole again on a retry; any other body is never sent
// twice once it has been read. Put does not close body.
func (s *ImagesService) Put(ctx context.Context, name string, body io.Reader, contentType string, opts *ImagePutOptions) error {
	const op = "Images.Put"
	esc, err := escapeName(op, "image", name)
	if err != nil {
		return err
	}
	if body == nil {
		return invalidArg(op, "body is nil")
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || !imageContentTypes[mt] {
		return invalidArg(op, "content type %q is not one of application/json, image/jpeg, image/png, image/tiff", contentType)
	}
	var size int64
	if opts != nil {
		size = opts.Size
	}
	if size < 0 {
		return invalidArg(op, "ImagePutOptions.Size is negative (%d)", size)
	}
	q, err := encodeQuery(op, opts)
	if err != nil {
		return err
	}
	sb, err := newStreamBody(body, size)
	if err != nil {
		return invalidArg(op, "preparing body: %v", err)
	}
	if sb.length == 0 {
		return invalidArg(op, "body is empty")
	}
	err = s.client.doNoContent(ctx, &operation{name: op, method: "PUT", path: "/images/", seg: esc, query: q, stream: sb, contentType: mt})
	var apiErr *APIError
	if sb.length < 0 && errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusLengthRequired {
		return fmt.Errorf("%w (the body's length is unknown, so it was sent chunked: pass ImagePutOptions.Size, or use PutFile)", err)
	}
	return err
}

// PutFile uploads the image file at path as the image called name, with the content type read
// from the file's first bytes (PNG, JPEG or TIFF). The file is streamed, and re-sent whole on a
// retry.
func (s *ImagesService) PutFile(ctx context.Context, name, path string, opts *ImagePutOptions) error {
	const op = "Images.PutFile"
	f, err := os.Open(path)
	if err != nil {
		return invalidArg(op, "%v", err)
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := f.ReadAt(head, 0)
	ct := DetectImageType(head[:n])
	if ct == "" {
		return invalidArg(op, "%s is not a PNG, JPEG or TIFF file (use PutJSON for NetPBM)", path)
	}
	return s.Put(ctx, name, f, ct, opts)
}

// DetectImageType returns the upload content type of an image file from its first bytes:
// image/png, image/jpeg or image/tiff, or "" for anything else.
func DetectImageType(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("II*\x00")), bytes.HasPrefix(b, []byte("MM\x00*")):
		return "image/tiff"
	}
	return ""
}

// PutJSON creates or replaces the image called name with the JSON form of the upload,
// {"data": base64, "intent": ...}, which also carries formats such as NetPBM.
func (s *ImagesService) PutJSON(ctx context.Context, name string, img ImageUpload) error {
	const op = "Images.PutJSON"
	esc, err := escapeName(op, "image", name)
	if err != nil {
		return err
	}
	if len(img.Data) == 0 {
		return invalidArg(op, "image data is empty")
	}
	body, err := jsonBody(op, img)
	if err != nil {
		return err
	}
	return s.client.doNoContent(ctx, &operation{name: op, method: "PUT", path: "/images/", seg: esc, body: body, contentType: mediaJSON})
}

// Delete deletes the image called name (DELETE /api/v3/images/{name}).
func (s *ImagesService) Delete(ctx context.Context, name string) error {
	const op = "Images.Delete"
	esc, err := escapeName(op, "image", name)
	if err != nil {
		return err
	}
	return s.client.doNoContent(ctx, &operation{name: op, method: "DELETE", path: "/images/", seg: esc})
}

// WaitReady polls Info until the image called name is READY and returns its info. An image in
// state ERROR returns its info and an error wrapping ErrImageFailed; the context bounds the wait.
func (s *ImagesService) WaitReady(ctx context.Context, name string) (*ImageInfo, error) {
	const maxInterval = 2 * time.Second
	interval := s.client.pollInterval
	for {
		info, err := s.Info(ctx, name)
		if err != nil {
			return nil, err
		}
		switch info.State {
		case ImageStateReady:
			return info, nil
		case ImageStateError:
			return info, fmt.Errorf("%w: image %q is in state %s", ErrImageFailed, name, strings.ToUpper(string(info.State)))
		}
		if err := s.client.sleep(ctx, interval); err != nil {
			return nil, err
		}
		interval = min(interval*2, maxInterval)
	}
}
