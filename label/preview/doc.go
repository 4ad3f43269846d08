// Package preview draws a label of package label as a picture, offline and in pure Go, so
// that a label can be seen (and its barcodes scanned) before one is printed.
//
//	img, warns, err := preview.Render(lbl, &preview.Options{DPI: 300})
//	for _, w := range warns { fmt.Fprintln(os.Stderr, w) } // objs[4]: font "Arial Narrow" not given; drawn with Go Regular
//	_, err = preview.PNG(f, lbl, nil)
//
// # Geometry
//
// Millimetres become pixels at Options.DPI, else the label's hdpi and vdpi, else 300 dpi: a
// length of mm is mm x dpi / 25.4 pixels rounded half away from zero, the one rounding rule of
// the package. The image is width x dpi / 25.4 by height x dpi / 25.4 pixels (a 50 x 30 mm
// label is 591 x 354 pixels at 300 dpi), turned by the label's rotation (CW90, CW180, CCW90)
// as it leaves the printer. A box given in mm (Rect, StaticBitmap) has its edges rounded, so a
// 20 mm square at x = 10 mm covers pixels 118 to 353 at 300 dpi. A barcode's module is a whole
// number of pixels (barWidth or moduleSize rounded, at least one; an absent barWidth is 3
// dots), as a printer prints whole dots, and its box is the symbol; the quiet zone lies outside
// the box. A symbol's spaces, light modules and quiet zone are left unpainted, as the printer
// prints only the dark: another object's marks there show, and are warned about. x and y place the point of an object's box named by hAnchor
// (LEFT, CENTER, RIGHT) and vAnchor (TOP, CENTER, BOTTOM), LEFT and TOP when absent, as
// package label reads them.
//
// # Stored images
//
// A StaticBitmap whose bitmap is not a base64 PNG names an image stored on the printer: its
// bytes are read through Options.Images (ImagesFrom reads them from a printer, keeping 32 MiB
// of them), and it is drawn as a marked box with a warning when there is no resolver or the
// resolver cannot give it. A stored PNG is decoded as a base64 PNG is, a row at a time at most
// at the size it prints, with the same pixels; a JPEG, a TIFF or an interlaced PNG is decoded
// whole, within Options.MaxPixels. Any image over Options.MaxPixels is refused before its
// pixels are allocated. A stored image is not in the label's bytes, so one render decodes
// stored images of at most 4 times Options.MaxPixels in all, a PNG placed again at the same
// size counted once; past it a stored image is a marked box and a warning.
//
// # Nothing is dropped silently
//
// What the preview cannot draw as the label asks is drawn as near as it can and listed in the
// Warnings with its place: an object of an unknown type is a magenta box with its diagonals
// (when it has x, y, width and height), a barcode that cannot be encoded and a stored image
// that cannot be had are marked boxes, a font family not in Options.Fonts is drawn with Go's
// font of the same style, a dynamic-text code that cannot be filled is shown as written, a
// property the preview does not know is ignored. Render returns an error only when there is
// no image to give: no label, no size, or more pixels than Options.MaxPixels (64 megapixels by
// default), refused before anything is allocated.
//
// # Bounded work
//
// Beyond the image itself, what a render costs grows with the label's size, not with what it
// asks for: geometry is clipped to the image before it is rasterised, the dashes of all
// PolyLines share a bound, a StaticBitmap's PNG, base64 or stored, is read a row at a time
// into the picture of its visible part (at most at the size it prints), text is not laid out past the label's
// right or bottom edge where nothing more of it can show, and dynamic text is filled with
// label.Expand's bounds. Package label's README states the bound and measures hostile labels
// against it; FuzzBounded holds every entry point to it.
//
// # What a preview cannot know
//
// The printer's fonts live on the printer: the preview draws with the fonts Options.Fonts
// maps, else Go's. optimize (the printer's own encoding choice), debleed (ink-spread
// compensation), the stretch of a label, the tinting of fgColor on a colour bitmap and the
// exact metrics of Font.width are not specified: they are approximated or ignored, and warned
// about when a label sets them. The quiet zone's place (outside the box) and moduleSize's
// default (5 printer dots) are package label's readings of pages that do not say.
package preview
