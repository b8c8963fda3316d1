package scene

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxNodes bounds the elements of one metadata file: MTD_TL.xml, the
// largest a product holds, has tens of thousands (a million took a second
// of CPU to reach).
const maxNodes = 1 << 18

// node is an XML element: local name, attributes, text and children.
type node struct {
	name  string
	attr  map[string]string
	text  string
	kids  []*node
	depth int
}

// parseXML reads a metadata file into a tree. encoding/xml never expands
// entities a document declares (nor fetches external ones), so an entity
// bomb cannot grow; a DOCTYPE declaring entities is refused outright with a
// clear message, and size and element count are bounded.
func parseXML(b []byte, where string) (*node, error) {
	if len(b) > maxXML {
		return nil, fmt.Errorf("%s: %d bytes is more than the %d a metadata file may have", where, len(b), maxXML)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	root := &node{}
	stack := []*node{root}
	count := 0
	var text strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: malformed XML: %v", where, err)
		}
		switch t := tok.(type) {
		case xml.Directive:
			if bytes.Contains(bytes.ToUpper(t), []byte("ENTITY")) {
				return nil, fmt.Errorf("%s: the XML declares entities (an entity bomb or an external reference): refused", where)
			}
		case xml.StartElement:
			count++
			if count > maxNodes {
				return nil, fmt.Errorf("%s: more than %d XML elements, the most Canopy reads from a metadata file (a product's largest, MTD_TL.xml, has tens of thousands): refused", where, maxNodes)
			}
			if len(stack) > 256 {
				return nil, fmt.Errorf("%s: XML elements nested more than 256 deep, the most Canopy reads (a product's metadata nests about ten): refused", where)
			}
			n := &node{name: t.Name.Local, depth: len(stack)}
			if len(t.Attr) > 0 {
				n.attr = map[string]string{}
				for _, a := range t.Attr {
					n.attr[a.Name.Local] = a.Value
				}
			}
			top := stack[len(stack)-1]
			top.kids = append(top.kids, n)
			stack = append(stack, n)
			text.Reset()
		case xml.CharData:
			if text.Len() < 1<<16 {
				text.Write(t)
			}
		case xml.EndElement:
			top := stack[len(stack)-1]
			if len(top.kids) == 0 {
				top.text = strings.TrimSpace(text.String())
			}
			text.Reset()
			stack = stack[:len(stack)-1]
		}
	}
	if len(root.kids) == 0 {
		return nil, fmt.Errorf("%s: empty XML", where)
	}
	return root.kids[0], nil
}

// first returns the first descendant (depth first) with the local name.
func (n *node) first(name string) *node {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.name == name {
			return k
		}
		if f := k.first(name); f != nil {
			return f
		}
	}
	return nil
}

// all returns every descendant with the local name, in document order.
func (n *node) all(name string) []*node {
	var out []*node
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.name == name {
			out = append(out, k)
		}
		out = append(out, k.all(name)...)
	}
	return out
}

// value is the text of the first descendant with the name ("" if none).
func (n *node) value(name string) string {
	if f := n.first(name); f != nil {
		return f.text
	}
	return ""
}
